// The default of `auth.public_base_url`: where this server listens, so ping URLs, acknowledge and
// verification links reach it on whatever `PORT` and `HOST` it was started with.
import { isIPv6 } from 'node:net';

/** Hosts a client cannot dial (wildcards) or that a passkey cannot use as its relying party (loopback IPs). */
const LOCALHOST_ALIASES = new Set(['0.0.0.0', '127.0.0.1', '[::]', '[::1]']);

/**
 * `http://{host}:{port}` as an origin: a wildcard or loopback address becomes `localhost`, another
 * IPv6 address gets brackets, a default port is dropped. Undefined when the host is no URL host.
 */
export function listenOrigin(host: string, port: number): string | undefined {
  const bracketed = isIPv6(host) ? `[${host}]` : host;
  try {
    const url = new URL(`http://${bracketed}:${port}`);
    if (LOCALHOST_ALIASES.has(url.hostname)) url.hostname = 'localhost';
    return url.origin;
  } catch {
    return undefined;
  }
}
