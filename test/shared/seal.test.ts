import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { createSealer, keyIdOf, SealError, sealerFor } from '../../src/shared/seal.js';

const KEY = randomBytes(32);

/** A real pino logger writing into an array, to see what boot logs. */
function memoryLog(): { log: pino.Logger; lines: Array<{ level: number; msg: string; key?: string }> } {
  const lines: Array<{ level: number; msg: string; key?: string }> = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({ level: 'info' }, stream), lines };
}

const configWith = (kek?: string) => loadConfig({ env: {}, cwd: '/nonexistent', overrides: { 'security.credentials_kek_base64': kek } });

// pino writes through its stream asynchronously.
const settle = () => new Promise((r) => setImmediate(r));

describe('sealer with a key', () => {
  const sealer = sealerFor(KEY);

  it('round-trips text, including empty and non-ASCII values', () => {
    for (const text of ['s3cret', '', 'päss wörd ✓ {{x}}', 'a:b:c:d', 'x'.repeat(5000)]) {
      assert.equal(sealer.open(sealer.seal(text)), text);
    }
  });

  it('writes a versioned value naming the key, never the plaintext', () => {
    const sealed = sealer.seal('hunter2-hunter2');
    const parts = sealed.split(':');
    assert.equal(parts.length, 5);
    assert.equal(parts[0], 'kw1');
    assert.equal(parts[1], keyIdOf(KEY));
    assert.equal(sealer.keyId, keyIdOf(KEY));
    for (const p of parts.slice(1)) assert.match(p, /^[A-Za-z0-9_-]+$/);
    assert.equal(Buffer.from(parts[2]!, 'base64url').length, 12);
    assert.ok(!sealed.includes('hunter2'));
    assert.ok(!Buffer.from(parts[4]!, 'base64url').toString('latin1').includes('hunter2'));
  });

  it('uses a fresh IV every time: the same plaintext seals differently', () => {
    const seen = new Set(Array.from({ length: 50 }, () => sealer.seal('same')));
    assert.equal(seen.size, 50);
    const ivs = new Set([...seen].map((s) => s.split(':')[2]));
    assert.equal(ivs.size, 50);
  });

  it('detects tampering with the ciphertext, tag or IV', () => {
    const sealed = sealer.seal('transfer 100');
    const parts = sealed.split(':');
    const flip = (b64: string) => {
      const buf = Buffer.from(b64, 'base64url');
      buf[0]! ^= 0x01;
      return buf.toString('base64url');
    };
    for (const i of [2, 3, 4]) {
      const tampered = parts.map((p, j) => (j === i ? flip(p) : p)).join(':');
      assert.throws(() => sealer.open(tampered), SealError, `part ${i}`);
    }
    // Truncating the ciphertext fails too.
    assert.throws(() => sealer.open(parts.slice(0, 4).join(':') + ':' + parts[4]!.slice(0, -2)), SealError);
  });

  it('refuses strings that are not sealed values', () => {
    for (const junk of ['hunter2', 'kw1:abc', 'kw2:a:b:c:d', 'kw1:a:b:c:d!']) assert.throws(() => sealer.open(junk), SealError, junk);
  });

  it('reads values stored unsealed before a key was configured', () => {
    assert.equal(sealer.open(sealerFor(null).seal('older')), 'older');
  });
});

describe('sealer key mismatch', () => {
  it('returns null for a value sealed under another key, and for any sealed value without a key', () => {
    const sealed = sealerFor(KEY).seal('secret');
    assert.equal(sealerFor(randomBytes(32)).open(sealed), null);
    assert.equal(sealerFor(null).open(sealed), null);
  });

  it('does not let a value sealed under another key pass as ours by rewriting its key id', () => {
    const mine = sealerFor(KEY);
    const foreign = sealerFor(randomBytes(32)).seal('secret').split(':');
    foreign[1] = mine.keyId!;
    assert.throws(() => mine.open(foreign.join(':')), SealError);
  });
});

describe('sealer without a key (plain mode)', () => {
  it('stores values marked as unsealed and reads them back', () => {
    const sealer = sealerFor(null);
    assert.equal(sealer.keyId, null);
    assert.equal(sealer.seal('visible'), 'plain:visible');
    assert.equal(sealer.open('plain:visible'), 'visible');
    assert.equal(sealer.open('plain:'), '');
  });
});

describe('createSealer from the configuration', () => {
  it('seals under the configured key and logs no warning', async () => {
    const { log, lines } = memoryLog();
    const sealer = createSealer(configWith(KEY.toString('base64')), log);
    await settle();
    assert.equal(sealer.keyId, keyIdOf(KEY));
    assert.equal(sealerFor(KEY).open(sealer.seal('x')), 'x');
    assert.deepEqual(lines.filter((l) => l.level >= 40), []);
  });

  it('warns once, naming the key, when none is configured, and stores plain values', async () => {
    const { log, lines } = memoryLog();
    const sealer = createSealer(configWith(undefined), log);
    sealer.seal('a');
    sealer.seal('b');
    await settle();
    const warnings = lines.filter((l) => l.level === 40);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.key, 'security.credentials_kek_base64');
    assert.match(warnings[0]!.msg, /unsealed/);
    assert.equal(sealer.seal('v'), 'plain:v');
  });

  it('refuses a key that is not 32 bytes, or not base64, naming the config key', () => {
    const { log } = memoryLog();
    for (const bad of [randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'not base64 at all!', '@@@@']) {
      assert.throws(() => createSealer(configWith(bad), log), (err: unknown) =>
        err instanceof ConfigError && err.key === 'security.credentials_kek_base64', bad);
    }
  });

  it('refuses a raw key of the wrong length', () => {
    assert.throws(() => sealerFor(randomBytes(31)), SealError);
  });
});
