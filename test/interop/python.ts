/**
 * Runs the Python caller (test/python) from a test: the venv comes from tools/python/ensure-venv.sh (created in
 * .cache/python-venv on first use, reused after). A machine without Python fails the test with the reason: the
 * point of these tests is a caller in another language, so there is nothing to skip to.
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const ENSURE_VENV = path.join(root, 'tools/python/ensure-venv.sh');
const SCRIPTS = path.join(root, 'test/python');

let venvPython: Promise<string> | undefined;

/** The venv's python, creating the venv first when needed (about 30 s with the wheels downloaded). */
export function pythonForCaller(): Promise<string> {
  venvPython ??= execFileAsync('bash', [ENSURE_VENV], { cwd: root, timeout: 5 * 60_000 }).then(
    ({ stdout }) => path.resolve(root, stdout.trim().split('\n').at(-1) ?? ''),
    (err: { stderr?: string; message: string }) => {
      throw new Error(
        `the Python caller needs a venv and could not get one (run tools/python/ensure-venv.sh to see why): ${err.stderr?.trim() || err.message}`,
      );
    },
  );
  return venvPython;
}

export interface PythonRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `test/python/<script>` with `stdin` and extra environment (nothing else of this process's PAYLOAD_* leaks in). */
export async function runPython(
  script: string,
  args: string[],
  options: { stdin: string; env: Record<string, string>; timeoutMs?: number },
): Promise<PythonRun> {
  const python = await pythonForCaller();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PYTHONDONTWRITEBYTECODE: '1',
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(python, [path.join(SCRIPTS, script), ...args], {
      cwd: SCRIPTS,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin);
  });
}

/** The script's JSON answer, or an error carrying everything it printed. */
export function jsonAnswer<T>(run: PythonRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`the Python caller printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}
