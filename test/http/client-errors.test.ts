// Requests the HTTP parser refuses before routing (oversized headers, bytes that are not HTTP) still
// answer with the error envelope and its content type, over a real socket.
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { onClientError } from '../../src/http/error-handler.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

interface RawResponse { status: number; headers: Record<string, string>; body: string }

/** Writes `raw` to the server and reads until it closes the connection. */
function sendRaw(port: number, raw: string): Promise<RawResponse> {
  return new Promise((ok, fail) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => { data += chunk; });
    // The server may reset the connection after answering while the rest of a large request is still in flight.
    socket.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') fail(err); });
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      ok({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.write(raw);
  });
}

describe('errors raised before routing', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(async () => { await t.close(); });

  function assertEnvelope(res: RawResponse, status: number, code: string): void {
    assert.equal(res.status, status, JSON.stringify(res));
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
    const body = JSON.parse(res.body) as { error: { code: string; message: string } };
    assert.deepEqual(Object.keys(body), ['error']);
    assert.equal(body.error.code, code);
    assert.equal(typeof body.error.message, 'string');
  }

  it('answers a 20 kB Authorization header with 431 and the error envelope', async () => {
    const res = await sendRaw(port, `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`);
    assertEnvelope(res, 431, 'PAYLOAD_TOO_LARGE');
    assert.match(res.body, /headers are too large/);
  });

  it('answers bytes that are not HTTP with 400 VALIDATION_FAILED and the error envelope', async () => {
    assertEnvelope(await sendRaw(port, 'HELLO THERE\r\n\r\n'), 400, 'VALIDATION_FAILED');
    assertEnvelope(await sendRaw(port, 'GET / HTTP/1.1\r\nHost: x\r\nBad Header Name: v\r\n\r\n'), 400, 'VALIDATION_FAILED');
  });

  it('still serves well-formed requests on the same listener', async () => {
    const res = await sendRaw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(res.status, 200);
  });
});

describe('onClientError', () => {
  /** What the handler writes to a socket for an error with `code`, and whether it closed it. */
  function answer(code: string, destroyed = false): { written: string; destroyed: boolean } {
    const socket = new PassThrough();
    socket.on('error', () => {});
    if (destroyed) socket.destroy();
    let written = '';
    socket.on('data', (d: Buffer) => { written += d.toString(); });
    onClientError(Object.assign(new Error(code), { code }), socket);
    written += socket.read()?.toString() ?? '';
    return { written, destroyed: socket.destroyed };
  }

  it('answers a client too slow to send its request with 408 and the envelope, then closes', () => {
    const { written, destroyed } = answer('ERR_HTTP_REQUEST_TIMEOUT');
    assert.match(written, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(written, /\r\n\r\n\{"error":\{"code":"VALIDATION_FAILED","message":"the request was not received in time"\}\}$/);
    assert.ok(destroyed);
  });

  it('writes nothing to a connection that was reset or is gone', () => {
    assert.equal(answer('ECONNRESET').written, '');
    assert.equal(answer('HPE_HEADER_OVERFLOW', true).written, '');
  });
});
