// Container HEALTHCHECK: the slim base image has no curl, so Node asks /readyz itself.
// Healthy means ready to score (model loaded), which is what compose's depends_on and operators want.
// The certificate is usually self-signed or issued for the public name, so it is not verified here:
// the check talks to 127.0.0.1 inside the container and sends no secret.
import http from 'node:http';
import https from 'node:https';

const tlsOff = (process.env.TLS_MODE ?? 'on').toLowerCase() === 'off';
const port = Number(process.env.PORT || 8443);
const client = tlsOff ? http : https;

const req = client.get(
  { host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 4000 },
  (res) => {
    res.resume();
    process.exit(res.statusCode === 200 ? 0 : 1);
  },
);
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', () => process.exit(1));
