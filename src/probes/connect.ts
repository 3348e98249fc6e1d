// The one rule tcp and tls_cert share for reaching a host: resolve through the connect-time guard,
// then connect to the allowed addresses in order, each by its literal (pinned: Node never resolves
// the name again, so a rebinding answer cannot slip past the guard). The caller's deadline carries
// the check's single timeout budget; a failure moves on to the next address within it.
import { connect, isIP, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { NetworkGuard, ResolvedAddress } from '../net/guard.js';
import type { Deadline } from './outcome.js';

export interface ConnectTarget {
  host: string;
  port: number;
  /** From `ip_version` (FAMILY in outcome.ts): 0 any, 4, 6. */
  family: 0 | 4 | 6;
}

export interface PinnedConnection {
  socket: Socket;
  /** The address the socket is connected to. */
  address: ResolvedAddress;
  /** `dns` only for a name; `connect` from the first attempt to established, failed attempts included. */
  timings: { dns?: number; connect: number };
}

/** One TCP connect to one address literal; destroys the socket on abort or failure. */
function connectOnce(address: ResolvedAddress, port: number, deadline: Deadline): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: address.address, port, family: address.family });
    let stopListening = (): void => {};
    const cleanup = (): void => {
      stopListening();
      socket.removeListener('error', onError);
    };
    const onError = (err: Error): void => { cleanup(); socket.destroy(); reject(err); };
    socket.once('error', onError);
    socket.once('connect', () => { cleanup(); resolve(socket); });
    stopListening = deadline.onAbort((reason) => { cleanup(); socket.destroy(); reject(reason); });
  });
}

/**
 * Resolves `host` through the guard (BlockedAddressError and resolver errors propagate) and returns
 * the first connection that succeeds; throws the last attempt's error when none does. Addresses are
 * tried one after another, not raced: the check's budget is the only clock, as the spec has one `timeout`.
 */
export async function connectPinned(guard: NetworkGuard, target: ConnectTarget, deadline: Deadline): Promise<PinnedConnection> {
  const dnsStart = performance.now();
  const addresses = await guard.resolveForConnect(target.host, target.family);
  // The resolver honours no deadline: do not open sockets for a check whose budget has already run out.
  deadline.throwIfAborted();
  const connectStart = performance.now();
  const dns = isIP(target.host) ? undefined : connectStart - dnsStart;
  let lastError: unknown = new Error('no address to connect to');
  for (const address of addresses) {
    try {
      const socket = await connectOnce(address, target.port, deadline);
      const connectMs = performance.now() - connectStart;
      return { socket, address, timings: dns === undefined ? { connect: connectMs } : { dns, connect: connectMs } };
    } catch (err) {
      deadline.throwIfAborted();
      lastError = err;
    }
  }
  throw lastError;
}
