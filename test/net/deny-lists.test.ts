import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type AbuseBlockedEvent, DenyListError, DenyLists } from '../../src/net/deny-lists.js';
import { AppError } from '../../src/shared/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'keepwatch-deny-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function file(content: string): string {
  const path = join(dir, `list-${fileCount++}.txt`);
  writeFileSync(path, content);
  return path;
}

const PATTERNS = `# recon paths
/.env
/.git/config     # a comment after an entry
/wp-admin/
/**/.env
/backup-*.sql

/api/*/debug
`;

const DOMAINS = `# abusive domains
Evil.Example.
bücher.example
`;

function refusedCode(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.status, 400);
    return err.code;
  }
}

describe('DenyLists: URL patterns', () => {
  const lists = DenyLists.load({ urlPatterns: file(PATTERNS) });
  const cases: [string, boolean][] = [
    ['https://a.test/.env', true], ['https://a.test/.ENV', true], ['https://a.test/.env/x', true],
    ['https://a.test/.git/config', true], ['https://a.test/.git', false],
    ['https://a.test/wp-admin', true], ['https://a.test/wp-admin/install.php', true], ['https://a.test/wp-admin2', false],
    ['https://a.test/app/sub/.env', true], ['https://a.test/.envrc', false],
    ['https://a.test/backup-2024.sql', true], ['https://a.test/dir/backup-2024.sql', false],
    ['https://a.test/api/v1/debug', true], ['https://a.test/api/v1/v2/debug', false],
    ['https://a.test/x/../.env', true], ['https://a.test/%2Eenv', true], ['https://a.test/.%65nv', true],
    ['https://a.test/.env;x', true], ['https://a.test/x/..%2f.env', true], ['https://a.test/x/..%2F..%2F.git/config', true], ['https://a.test//wp-admin/x', true],
    ['https://a.test/.env%3Fx', false], ['https://a.test/a;b/.envrc', false],
    ['https://a.test//.env', true], ['https://a.test///.git//config', true], ['https://a.test/%2F.env', true], ['https://a.test/api//v1/debug', true],
    ['https://a.test/health?file=/.env', false], ['https://a.test/#/.env', false], ['https://a.test/', false],
    ['not a url', false],
  ];
  for (const [url, blocked] of cases) {
    it(`${url} ${blocked ? 'is blocked' : 'passes'}`, () => {
      assert.equal(refusedCode(() => lists.checkUrl(url, 'check.url')), blocked ? 'URL_PATTERN_BLOCKED' : null);
    });
  }

  it('names the field and the pattern, and reports an abuse_blocked event', () => {
    const events: AbuseBlockedEvent[] = [];
    assert.throws(() => lists.checkUrl('https://user:pw@a.test/.git/config?x=1', 'check.start_url', (e) => events.push(e)),
      (err: AppError) => err.extra.field === 'check.start_url' && err.message.includes('/.git/config'));
    assert.deepEqual(events, [{ event: 'abuse_blocked', quota: 'url_pattern', details: {
      code: 'URL_PATTERN_BLOCKED', field: 'check.start_url', rule: '/.git/config', source: `${join(dir, 'list-0.txt')}:3`,
      value: 'a.test/.git/config' } }]);
  });

  it('still refuses when the onBlocked callback throws', () => {
    const code = refusedCode(() => lists.checkUrl('https://a.test/.env', 'check.url', () => { throw new Error('store down'); }));
    assert.equal(code, 'URL_PATTERN_BLOCKED');
  });

  it('does not report a URL that passes', () => {
    const events: AbuseBlockedEvent[] = [];
    lists.checkUrl('https://a.test/health', 'check.url', (e) => events.push(e));
    assert.deepEqual(events, []);
  });
});

describe('DenyLists: domains', () => {
  const lists = DenyLists.load({ domains: file(DOMAINS) });
  const cases: [string, boolean][] = [
    ['evil.example', true], ['EVIL.example.', true], ['a.b.evil.example', true], ['notevil.example', false],
    ['evil.example.com', false], ['example', false], ['xn--bcher-kva.example', true], ['shop.Bücher.example', true],
    ['127.0.0.1', false],
  ];
  for (const [host, blocked] of cases) {
    it(`${host} ${blocked ? 'is denied' : 'passes'}`, () => {
      assert.equal(refusedCode(() => lists.checkDomain(host, 'check.host')), blocked ? 'DOMAIN_DENYLISTED' : null);
    });
  }

  it('checkUrl applies the domain list to the URL host, and reports it', () => {
    const events: AbuseBlockedEvent[] = [];
    const code = refusedCode(() => lists.checkUrl('http://www.evil.example:8080/ok', 'check.url', (e) => events.push(e)));
    assert.equal(code, 'DOMAIN_DENYLISTED');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.quota, 'domain_denylist');
    assert.equal(events[0]?.details.rule, 'evil.example');
    assert.equal(events[0]?.details.value, 'www.evil.example');
  });
});

describe('DenyLists.load validation', () => {
  const badPatterns: [string, RegExp][] = [
    ['/ok\n.env\n', /:2: pattern ".env" must start with \//],
    ['/ok\n/a?b\n', /:2: .*character outside a URL path/],
    ['/ok\n\n/a b\n', /:3: .*character outside a URL path/],
    ['/***/x\n', /:1: .*more than two \*/],
  ];
  for (const [content, message] of badPatterns) {
    it(`refuses pattern file ${JSON.stringify(content)} with file:line`, () => {
      const path = file(content);
      assert.throws(() => DenyLists.load({ urlPatterns: path }),
        (err: Error) => err instanceof DenyListError && err.message.startsWith(path) && message.test(err.message));
    });
  }

  const badDomains: [string, RegExp][] = [
    ['ok.example\n*.evil.example\n', /:2: "\*\.evil\.example" is not a domain/],
    ['10.0.0.1\n', /:1: "10.0.0.1" is an IP address/],
    ['a..b\n', /:1: "a..b" is not a valid domain/],
    ['https://x.example/\n', /:1: .*is not a domain/],
  ];
  for (const [content, message] of badDomains) {
    it(`refuses domain file ${JSON.stringify(content)} with file:line`, () => {
      const path = file(content);
      assert.throws(() => DenyLists.load({ domains: path }),
        (err: Error) => err instanceof DenyListError && err.message.startsWith(path) && message.test(err.message));
    });
  }

  it('refuses a missing file naming it', () => {
    const path = join(dir, 'missing.txt');
    assert.throws(() => DenyLists.load({ domains: path }), (err: Error) => err.message.startsWith(`${path}: cannot read`));
  });

  it('counts entries and treats an absent path as an empty list', () => {
    assert.deepEqual(DenyLists.load({ urlPatterns: file(PATTERNS), domains: file(DOMAINS) }).size, { urlPatterns: 6, domains: 2 });
    assert.deepEqual(DenyLists.load({}).size, { urlPatterns: 0, domains: 0 });
  });
});
