// The ICMP echo addon (native/ping/ping.cc, built by `npm ci` through the root binding.gyp) as the
// ping probe uses it. The addon is loaded on first use, never at import: a node where it failed to
// build still serves every other kind, and its ping checks report why.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ResolvedAddress } from '../net/guard.js';

interface NativeIcmpSocket {
  /** `dgram` (unprivileged ICMP socket) or `raw` (the CAP_NET_RAW fallback). */
  readonly mode: 'dgram' | 'raw';
  /** Throws on a send failure; `done` runs once, on the reply or a receive error, never after close(). */
  echo(address: string, sequence: number, done: (err: Error | null, rttMs: number) => void): void;
  close(): void;
}

export interface IcmpBinding {
  IcmpSocket: new (family: 4 | 6, datagramOnly: boolean) => NativeIcmpSocket;
}

export type IcmpLoad = { ok: true; binding: IcmpBinding } | { ok: false; reason: string };

const ADDON_PATH = '../../build/Release/keepwatch_ping.node';

/** Loads the addon at `path` (relative to this file); a missing or broken build becomes a reason. */
export function loadIcmpBinding(path: string = ADDON_PATH): IcmpLoad {
  try {
    return { ok: true, binding: createRequire(import.meta.url)(path) as IcmpBinding };
  } catch {
    return { ok: false, reason: 'ICMP support not built' };
  }
}

let loaded: IcmpLoad | undefined;

/** The process's addon, loaded once. */
export function loadIcmp(): IcmpLoad {
  loaded ??= loadIcmpBinding();
  return loaded;
}

/** The ICMP socket could not be opened: the node cannot ping at all, which is `error`, not `down`. */
export class IcmpSocketError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'IcmpSocketError';
  }
}

/**
 * Why datagram ICMP was refused, when the sysctl explains it: the kernel allows the socket only to a
 * process with its effective or a supplementary group inside `net.ipv4.ping_group_range` (IPv6 too).
 */
function groupRangeHint(): string {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ping_group_range', 'utf8').trim().split(/\s+/).map(Number);
    const gid = process.getegid?.() ?? 0;
    const groups = [gid, ...(process.getgroups?.() ?? [])];
    return groups.some((g) => g >= low! && g <= high!) ? '' : ` (net.ipv4.ping_group_range excludes gid ${gid})`;
  } catch {
    return '';
  }
}

function describeOpenFailure(err: unknown): string {
  const e = err as { code?: string; rawCode?: string; message?: string };
  if (!e?.code) return `cannot open ICMP socket: ${e?.message ?? String(err)}`;
  const hint = e.code === 'EACCES' ? groupRangeHint() : '';
  const raw = e.rawCode ? `; raw socket: ${e.rawCode}${e.rawCode === 'EPERM' ? ' (no CAP_NET_RAW)' : ''}` : '';
  return `cannot open ICMP socket: ${e.code}${hint}${raw}`;
}

/** Datagram first, raw on refusal unless `datagramOnly`; throws IcmpSocketError with the reason. */
function openIcmpSocket(binding: IcmpBinding, family: 4 | 6, datagramOnly: boolean): NativeIcmpSocket {
  try {
    return new binding.IcmpSocket(family, datagramOnly);
  } catch (err) {
    throw new IcmpSocketError(describeOpenFailure(err));
  }
}

let sequence = Math.floor(Math.random() * 0x10000);

/**
 * One echo request to one address on its own socket: resolves with the round-trip time in ms,
 * rejects with IcmpSocketError, a send/receive error (code ENETUNREACH...) or the signal's reason.
 * The socket is closed however it ends.
 */
export function echoAddress(binding: IcmpBinding, address: ResolvedAddress, signal: AbortSignal,
  options: { datagramOnly?: boolean } = {}): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    signal.throwIfAborted();
    const socket = openIcmpSocket(binding, address.family === 6 ? 6 : 4, options.datagramOnly ?? false);
    const settle = (finish: () => void): void => {
      signal.removeEventListener('abort', onAbort);
      socket.close();
      finish();
    };
    const onAbort = (): void => settle(() => reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    sequence = (sequence + 1) & 0xffff;
    try {
      socket.echo(address.address, sequence, (err, rttMs) => settle(() => (err ? reject(err) : resolve(rttMs))));
    } catch (err) {
      settle(() => reject(err));
    }
  });
}
