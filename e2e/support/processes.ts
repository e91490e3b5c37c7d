import { ChildProcess, spawn } from 'node:child_process';
import { AddressInfo, createServer } from 'node:net';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Launched {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output contains `text`; rejects when the process exits first. */
  waitForOutput(text: string, timeoutMs: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs one of the repository's start commands as a real child process. */
export function launch(script: string, env: Record<string, string>): Launched {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, script)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => text,
    waitForOutput: (expected, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${expected}" within ${timeoutMs} ms:\n${text}`)), timeoutMs);
        const poll = setInterval(() => {
          if (text.includes(expected)) {
            clearInterval(poll);
            clearTimeout(timer);
            resolve();
          }
        }, 50);
        void exited.then((code) => {
          clearInterval(poll);
          clearTimeout(timer);
          reject(new Error(`exited with ${code} before "${expected}":\n${text}`));
        });
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
