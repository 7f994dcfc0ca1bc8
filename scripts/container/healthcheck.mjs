// The image's HEALTHCHECK (compose's healthcheck too): the slim base image has no curl, so Node asks
// /readyz inside the container. Healthy means ready to score (model loaded), which is what compose's
// depends_on and operators want. The certificate is usually self-signed or issued for the public name,
// so it is not verified: the check sends no secret and reads only the status code. It is not the
// `helm test` probe: that one scores a chat through the Service with the certificate verified
// (helm/conversation-risk/files/helm-test-predict.mjs). Kubernetes probes the pods with httpGet.
// Env: PORT (8443), TLS_MODE (on|off), HEALTHCHECK_HOST (127.0.0.1).
import http from 'node:http';
import https from 'node:https';

const tlsOff = (process.env.TLS_MODE ?? 'on').toLowerCase() === 'off';
const host = process.env.HEALTHCHECK_HOST || '127.0.0.1';
const port = Number(process.env.PORT || 8443);
const client = tlsOff ? http : https;
const target = `${tlsOff ? 'http' : 'https'}://${host}:${port}/readyz`;

const req = client.get({ host, port, path: '/readyz', rejectUnauthorized: false, timeout: 4000 }, (res) => {
  res.resume();
  console.log(`${target} -> ${res.statusCode}`);
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timeout after 4 s')));
req.on('error', (err) => {
  console.log(`${target} -> ${err.message}`);
  process.exit(1);
});
