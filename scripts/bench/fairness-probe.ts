// The other key's client in the memory and fairness run, as a process of its own, as a real client is:
// it polls /health back to back and sends a 40-turn /predict every 50 ms until told to stop on stdin,
// then prints each latency as JSON. In the bench's own process the timings also held that process's
// pauses (its heap carries the in-process engine and the earlier steps' chats), which no client of the
// service shares.
//   node scripts/bench/fairness-probe.ts BASE KEY < conversation   (prints "ready", then, after a line on stdin, the JSON)
import { call } from './http.ts';

export interface ProbeLatencies {
  health: number[];
  predict: number[];
  predict_failed: number;
}

const [base, key] = process.argv.slice(2) as [string, string];
// The first line on stdin is the conversation; the next one says stop.
const lines: string[] = [];
let buffered = '';
let stopped!: () => void;
const stop = new Promise<void>((resolve) => (stopped = resolve));
process.stdin.on('data', (d: Buffer) => {
  buffered += d.toString();
  let nl: number;
  while ((nl = buffered.indexOf('\n')) !== -1) {
    lines.push(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (lines.length === 1) start(lines[0] as string);
    else stopped();
  }
});

function start(conversationJson: string): void {
  let done = false;
  void stop.then(() => (done = true));
  const out: ProbeLatencies = { health: [], predict: [], predict_failed: 0 };
  const poll = (async () => {
    while (!done) out.health.push((await call(base, 'GET', '/health', undefined, key)).ms);
  })();
  const body = JSON.stringify({ conversation: JSON.parse(conversationJson) as string });
  const predicts = (async () => {
    while (!done) {
      const r = await call(base, 'POST', '/predict', body, key);
      if (r.status === 200) out.predict.push(r.ms);
      else out.predict_failed++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  process.stdout.write('ready\n');
  void Promise.all([poll, predicts]).then(() => {
    // Exit once the pipe has taken it all (the keep-alive agent would hold the process open); exiting
    // straight after write() cut the JSON at the pipe's buffer.
    process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
  });
}
