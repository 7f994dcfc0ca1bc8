// Process entry: stop signals are watched before anything else loads (ops/stop-signals.ts says why),
// then the service starts (serve.ts). Keep the static imports here to that one leaf module.
import { watchStopSignals } from './ops/stop-signals.ts';

const stop = watchStopSignals();
const { serve } = await import('./serve.ts');
await serve(stop);
