// The other key's client in the memory and fairness run, as a process of its own, as a real client is:
// it polls /health back to back and sends a 40-turn /predict every 50 ms until told to stop on stdin,
// then prints each latency as JSON. In the bench's own process the timings also held that process's
// pauses (its heap carries the in-process engine and the earlier steps' chats), which no client of the
// service shares.
//   node scripts/bench/fairness-probe.ts BASE KEY < conversation   (prints "ready", then, after a line on stdin, the JSON)
import { createInterface } from 'node:readline';
import { call } from './http.ts';

export interface ProbeLatencies {
  health: number[];
  /** /health calls with no 200 answer (a connection error included). */
  health_failed: number;
  predict: number[];
  predict_failed: number;
}

const [base, key] = process.argv.slice(2) as [string, string];
// The first line on stdin is the conversation; the next one, or the end of stdin, says stop.
let stopped!: () => void;
const stop = new Promise<void>((resolve) => (stopped = resolve));
let lines = 0;
const input = createInterface({ input: process.stdin });
input.on('line', (line) => (++lines === 1 ? start(line) : stopped()));
input.on('close', () => stopped());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One call's status and time; a connection error (the server gone) is status 0, not a crash. */
async function timed(method: string, path: string, body?: string): Promise<{ status: number; ms: number }> {
  try {
    return await call(base, method, path, body, key);
  } catch {
    return { status: 0, ms: Number.NaN };
  }
}

function start(conversationJson: string): void {
  let done = false;
  void stop.then(() => (done = true));
  const out: ProbeLatencies = { health: [], health_failed: 0, predict: [], predict_failed: 0 };
  const poll = (async () => {
    while (!done) {
      const r = await timed('GET', '/health');
      if (r.status === 200) out.health.push(r.ms);
      else {
        out.health_failed++;
        await pause(50); // a server that is gone refuses at once: no busy loop
      }
    }
  })();
  const body = JSON.stringify({ conversation: JSON.parse(conversationJson) as string });
  const predicts = (async () => {
    while (!done) {
      const r = await timed('POST', '/predict', body);
      if (r.status === 200) out.predict.push(r.ms);
      else out.predict_failed++;
      await pause(50);
    }
  })();
  process.stdout.write('ready\n');
  void Promise.all([poll, predicts]).then(() => {
    // Exit once the pipe has taken it all (the keep-alive agent would hold the process open); exiting
    // straight after write() cut the JSON at the pipe's buffer.
    process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
  });
}
