// A TCP proxy between the service and a test's Redis, so the network can fail on cue: `cut` drops
// every connection and turns new ones away for a while (a restart or a network blip), `freeze`
// keeps connections open while nothing passes (a hung server, or a network that drops packets),
// `loseRepliesAfter` lets a request through and loses its answer (the server did the work, the
// client never hears so).
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Closes every connection now and closes new ones at once for `ms`. */
  cut(ms: number): Promise<void>;
  /** Stops all traffic, in both directions, until `thaw`; nothing is lost, only held. */
  freeze(): void;
  thaw(): void;
  /**
   * The next request whose bytes contain `needle` reaches the server, and from then on nothing the
   * server sends on that connection reaches the client (until `cut` replaces the connections).
   */
  loseRepliesAfter(needle: string): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let refusing = false;
  let frozen = false;
  let armed: string | undefined;
  const connect = ([client, upstream]: [net.Socket, net.Socket]) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    for (const s of pair) {
      s.on('error', end);
      s.on('close', end);
    }
    client.on('data', (chunk: Buffer) => {
      if (armed === undefined || !chunk.includes(armed)) return;
      armed = undefined;
      upstream.unpipe(client);
      upstream.on('data', () => {});
    });
    if (frozen) client.pause();
    else connect(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    async cut(ms) {
      refusing = true;
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      await new Promise((r) => setTimeout(r, ms));
      refusing = false;
    },
    freeze() {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) connect(pair);
    },
    loseRepliesAfter(needle) {
      armed = needle;
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
