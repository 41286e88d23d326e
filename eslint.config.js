// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cache/', 'coverage/', '.temporal/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // Prettier wraps code at 120 but leaves comments and strings as written.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    rules: { 'max-len': ['error', { code: 120 }] },
  },
  {
    // Plain CommonJS scripts run by node alone (the image's build steps).
    files: ['deploy/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-console': 'off' },
  },
  {
    files: ['src/cli/**', 'test/**', 'sandbox/**/main.ts', 'sandbox/fixture-schema-main.ts', 'tools/**'],
    rules: { 'no-console': 'off' },
  },
);
