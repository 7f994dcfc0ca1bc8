// Runs the service as operators do, `node src/main.ts` in a child process, on loopback ports chosen
// by the OS, and waits until it says where it listens. Without npm start's V8 memory flags: they bound
// peak memory under load, which these tests do not measure (server-flags.test.ts checks them).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { REPO_ROOT } from './app.ts';

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  /** The API's base URL, from the "listening" log line. */
  url: string;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Plain HTTP on 127.0.0.1 with one worker and no side listeners, plus the given variables. */
export async function startServerProcess(env: Record<string, string>, startTimeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      HTTP_PORT: '0',
      METRICS_PORT: '0',
      TLS_MODE: 'off',
      WORKERS: '1',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stdout} ${stderr}`)), startTimeoutMs);
    child.stdout.on('data', () => {
      const m = /"url":"(https?:\/\/[^"]+)".*"msg":"listening"/.exec(stdout);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return { child, url, stdout: () => stdout, stderr: () => stderr, exited };
}
