// hasScope over the spec's whole table (service-api.md, "API token auth" 2).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FULL_ACCESS, hasScope, SCOPE_ACTIONS, SCOPE_RESOURCES, type Scope } from '../../src/identity/scopes.js';

const ALL_SCOPES: Scope[] = SCOPE_RESOURCES.flatMap((r) => SCOPE_ACTIONS.map((a) => `${r}:${a}` as Scope));

/** The spec's rule, written independently of the implementation: which actions one granted action covers. */
const COVERS: Record<string, string[]> = { read: ['read'], write: ['write', 'read'], delete: ['delete'], execute: ['execute'] };

describe('hasScope', () => {
  it('covers the seven resources and four actions of the spec', () => {
    assert.deepEqual([...SCOPE_RESOURCES].sort(), ['channels', 'incidents', 'maintenance', 'oncall', 'status_page', 'targets', 'variables']);
    assert.deepEqual([...SCOPE_ACTIONS].sort(), ['delete', 'execute', 'read', 'write']);
  });

  it('a single granted scope covers exactly what the rule says, on every resource', () => {
    for (const granted of ALL_SCOPES) {
      const [gResource, gAction] = granted.split(':') as [string, string];
      for (const needed of ALL_SCOPES) {
        const [nResource, nAction] = needed.split(':') as [string, string];
        const expected = gResource === nResource && COVERS[gAction]!.includes(nAction);
        assert.equal(hasScope(new Set([granted]), needed), expected, `${granted} -> ${needed}`);
      }
    }
  });

  it('write implies read but neither delete nor execute', () => {
    const write = new Set(['targets:write']);
    assert.equal(hasScope(write, 'targets:read'), true);
    assert.equal(hasScope(write, 'targets:delete'), false);
    assert.equal(hasScope(write, 'targets:execute'), false);
  });

  it('delete and execute stand alone: neither implies read or write', () => {
    for (const action of ['delete', 'execute'] as const) {
      const granted = new Set([`targets:${action}`]);
      assert.equal(hasScope(granted, `targets:${action}`), true);
      assert.equal(hasScope(granted, 'targets:read'), false);
      assert.equal(hasScope(granted, 'targets:write'), false);
    }
  });

  it('read implies nothing else', () => {
    assert.equal(hasScope(new Set(['channels:read']), 'channels:write'), false);
  });

  it('a scope on one resource grants nothing on another', () => {
    assert.equal(hasScope(new Set(['targets:write']), 'channels:read'), false);
    assert.equal(hasScope(new Set(['variables:delete']), 'targets:delete'), false);
  });

  it('full_access grants every scope', () => {
    for (const needed of ALL_SCOPES) assert.equal(hasScope(new Set([FULL_ACCESS]), needed), true, needed);
  });

  it('unknown scope strings are ignored, alone or beside known ones', () => {
    const junk = ['targets:*', '*', 'targets', 'TARGETS:READ', 'targets:admin', 'full-access', 'FULL_ACCESS', 'billing:read', ' targets:read', ''];
    for (const needed of ALL_SCOPES) assert.equal(hasScope(new Set(junk), needed), false, needed);
    const mixed = new Set([...junk, 'incidents:write']);
    assert.equal(hasScope(mixed, 'incidents:read'), true);
    assert.equal(hasScope(mixed, 'incidents:delete'), false);
  });

  it('no scopes grant nothing', () => {
    for (const needed of ALL_SCOPES) assert.equal(hasScope(new Set(), needed), false);
  });
});
