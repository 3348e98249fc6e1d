// A TCP proxy to PostgreSQL whose connections can go silent without closing, as a connection does
// when its server vanishes behind a failover or a dropped route: nothing arrives, nothing resets.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface StallingProxy {
  /** `url` with its host and port replaced by the proxy's. */
  url: string;
  /** Stops forwarding on every connection open now; connections made later forward as usual. */
  stall(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(url: string): Promise<StallingProxy> {
  const upstream = new URL(url);
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const server = connect(Number(upstream.port || 5432), upstream.hostname);
    const pair: [Socket, Socket] = [client, server];
    pairs.add(pair);
    client.pipe(server).pipe(client);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    stall() {
      for (const [client, server] of pairs) {
        client.unpipe(server);
        server.unpipe(client);
        client.pause();
        server.pause();
      }
    },
    async close() {
      for (const [client, server] of pairs) {
        client.destroy();
        server.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
