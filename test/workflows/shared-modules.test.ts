/**
 * The workflow thread shares the src/ modules workflow code imports instead of evaluating them once per workflow:
 * the list the bundle is built with must name every one the bundle holds (a new one left out would quietly cost
 * every workflow its evaluation again), and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { SHARED_WORKFLOW_MODULES } from '../../src/worker/workflow-bundle.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';

describe('modules shared between workflows', () => {
  it('are exactly the src/ modules the workflow bundle holds', async () => {
    const { code } = await workflowBundle();
    const inBundle = new Set([...code.matchAll(/^\/\*\*\*\/ "\.\/(src\/[^"]+)\.ts"$/gm)].map((match) => match[1]));
    expect(inBundle.size).toBeGreaterThan(0);
    const shared = SHARED_WORKFLOW_MODULES.filter((module) => module.startsWith('src/'));
    expect([...inBundle].sort()).toEqual([...shared].sort());
  });

  it('are shared by the bundle: evaluated before any workflow, not per workflow', async () => {
    const { code } = await workflowBundle();
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
    for (const module of SHARED_WORKFLOW_MODULES) expect(preload).toContain(`${module}.ts`);
  });
});
