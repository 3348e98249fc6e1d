// Regions and agents: the public catalog, the operator's CRUD and agent registration.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';

const PUBLIC_KEYS = ['city', 'continent', 'country_code', 'id', 'latitude', 'longitude', 'name'];
interface ErrorBody { error: { code: string; field?: string } }
type Region = Record<string, unknown> & { id: string };

describe('regions', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp();
    token = (await createTenantWithToken(t)).token;
  });
  after(async () => { await t.close(); });

  const publicRegions = async (): Promise<Region[]> => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/regions', headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { regions: Region[] }).regions;
  };

  it('a fresh install has one enabled, default-selected region "local"', async () => {
    const res = await t.operator('GET', '/operator/regions');
    assert.equal(res.statusCode, 200);
    const regions = (res.json() as { regions: Region[] }).regions;
    assert.equal(regions.length, 1);
    assert.deepEqual({ ...regions[0], created_at: undefined, updated_at: undefined }, {
      id: 'local', name: 'Local', city: null, country_code: null, continent: null, latitude: null, longitude: null,
      enabled: true, default_selected: true, flow_capable: true, created_at: undefined, updated_at: undefined,
    });
    const one = await t.operator('GET', '/operator/regions/local');
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().default_selected, true);
  });

  it('GET /api/v1/regions needs a token and lists enabled regions with exactly the public fields', async () => {
    assert.equal((await t.inject({ method: 'GET', url: '/api/v1/regions' })).statusCode, 401);
    const created = await t.operator('POST', '/operator/regions', {
      id: 'eu-west', name: 'EU West', city: 'Dublin', country_code: 'IE', continent: 'Europe', latitude: 53.35, longitude: -6.26, flow_capable: true,
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/operator/regions/eu-west');
    assert.equal(created.json().enabled, true);
    assert.equal(created.json().default_selected, false);
    const hidden = await t.operator('POST', '/operator/regions', { id: 'ap-south', name: 'AP South', enabled: false });
    assert.equal(hidden.statusCode, 201);

    const regions = await publicRegions();
    assert.deepEqual(regions.map((r) => r.id), ['eu-west', 'local']);
    for (const r of regions) assert.deepEqual(Object.keys(r).sort(), PUBLIC_KEYS);
    assert.deepEqual(regions[0], { id: 'eu-west', name: 'EU West', city: 'Dublin', country_code: 'IE', continent: 'Europe', latitude: 53.35, longitude: -6.26 });
    const all = (await t.operator('GET', '/operator/regions')).json() as { regions: Region[] };
    assert.deepEqual(all.regions.map((r) => r.id), ['ap-south', 'eu-west', 'local']);
  });

  it('refuses a duplicate id (409) and invalid ids, coordinates and country codes (400 with field)', async () => {
    const dup = await t.operator('POST', '/operator/regions', { id: 'local', name: 'Again' });
    assert.equal(dup.statusCode, 409);
    assert.equal((dup.json() as ErrorBody).error.code, 'REGION_EXISTS');
    assert.equal((dup.json() as ErrorBody).error.field, 'id');
    assert.equal((await t.operator('GET', '/operator/regions/local')).json().name, 'Local', 'the existing region is untouched');
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ id: 'EU-West', name: 'x' }, 'id'], [{ id: '-eu', name: 'x' }, 'id'], [{ id: 'eu west', name: 'x' }, 'id'],
      [{ id: 'a'.repeat(64), name: 'x' }, 'id'],
      [{ id: 'lat-hi', name: 'x', latitude: 90.5 }, 'latitude'], [{ id: 'lat-lo', name: 'x', latitude: -91 }, 'latitude'],
      [{ id: 'lon-hi', name: 'x', longitude: 180.1 }, 'longitude'], [{ id: 'lon-lo', name: 'x', longitude: -181 }, 'longitude'],
      [{ id: 'cc-1', name: 'x', country_code: 'ie' }, 'country_code'], [{ id: 'cc-2', name: 'x', country_code: 'IRL' }, 'country_code'],
      [{ id: 'no-name', name: '' }, 'name'], [{ id: 'blank-name', name: ' \t ' }, 'name'],
    ];
    for (const [body, field] of bad) {
      const res = await t.operator('POST', '/operator/regions', body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal((res.json() as ErrorBody).error.field, field, JSON.stringify(body));
    }
    const edge = await t.operator('POST', '/operator/regions', { id: 'pole', name: 'Pole', latitude: -90, longitude: 180 });
    assert.equal(edge.statusCode, 201);
    assert.equal((await t.operator('PATCH', '/operator/regions/pole', { latitude: 91 })).statusCode, 400);
    // Every tenant reads these: stored trimmed, a blank city or continent is none.
    const tidy = await t.operator('POST', '/operator/regions', { id: 'tidy', name: ' Dublin 1 ', city: '  ', continent: ' Europe ' });
    assert.deepEqual([tidy.json().name, tidy.json().city, tidy.json().continent], ['Dublin 1', null, 'Europe']);
    const blanked = await t.operator('PATCH', '/operator/regions/tidy', { name: '   ' });
    assert.deepEqual([blanked.statusCode, (blanked.json() as ErrorBody).error.field], [400, 'name']);
  });

  it('PATCH edits a region, and disabling one hides it from /api/v1/regions at once', async () => {
    assert.equal((await t.operator('POST', '/operator/regions', { id: 'us-east', name: 'US East' })).statusCode, 201);
    assert.ok((await publicRegions()).some((r) => r.id === 'us-east'));
    const renamed = await t.operator('PATCH', '/operator/regions/us-east', { name: 'US East 1', city: 'Ashburn', country_code: 'US' });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().name, 'US East 1');
    assert.equal((await publicRegions()).find((r) => r.id === 'us-east')!.city, 'Ashburn');

    const disabled = await t.operator('PATCH', '/operator/regions/us-east', { enabled: false });
    assert.equal(disabled.statusCode, 200);
    assert.equal(disabled.json().enabled, false);
    assert.ok(!(await publicRegions()).some((r) => r.id === 'us-east'));
    assert.equal((await t.operator('GET', '/operator/regions/us-east')).json().enabled, false);
    assert.equal((await t.operator('PATCH', '/operator/regions/us-east', { enabled: true })).statusCode, 200);
    assert.ok((await publicRegions()).some((r) => r.id === 'us-east'));

    assert.equal((await t.operator('PATCH', '/operator/regions/nowhere', { enabled: false })).statusCode, 404);
    assert.equal((await t.operator('GET', '/operator/regions/nowhere')).statusCode, 404);
    assert.equal((await t.operator('PATCH', '/operator/regions/us-east', {})).statusCode, 400);
    assert.equal((await t.operator('PATCH', '/operator/regions/us-east', { id: 'renamed' })).statusCode, 422);
    // CONTRACT.md lists no region delete (monitors and agents refer to region ids): the route does not exist.
    assert.equal((await t.operator('DELETE', '/operator/regions/us-east')).statusCode, 404);
    assert.equal((await t.operator('GET', '/operator/regions/us-east')).statusCode, 200);
  });
});

describe('regions: a process without flow.enabled', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'flow.enabled': false } }); });
  after(async () => { await t.close(); });

  const stored = async (id: string) => (await t.services.db.query<{ flow_capable: boolean }>('SELECT flow_capable FROM regions WHERE id = $1', [id]))[0]!.flow_capable;
  const shown = async (id: string) => {
    const one = await t.operator('GET', `/operator/regions/${id}`);
    const all = (await t.operator('GET', '/operator/regions')).json() as { regions: Region[] };
    assert.equal(all.regions.find((r) => r.id === id)!.flow_capable, one.json().flow_capable, 'list and item agree');
    return one.json().flow_capable as boolean;
  };

  it('shows the built-in region as placement sees it: not flow-capable, whatever its row says', async () => {
    assert.equal(await stored('local'), true);
    assert.equal(await shown('local'), false);
    // PATCH stores what it is sent and answers like GET.
    const patched = await t.operator('PATCH', '/operator/regions/local', { flow_capable: true, city: 'Here' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().flow_capable, false);
    assert.equal(patched.json().city, 'Here');
    assert.equal(await stored('local'), true);
    assert.equal((await t.operator('PATCH', '/operator/regions/local', { flow_capable: false })).statusCode, 200);
    assert.equal(await stored('local'), false);
    // Another region's row speaks for its agents, not for this process.
    assert.equal((await t.operator('POST', '/operator/regions', { id: 'us', name: 'US', flow_capable: true })).json().flow_capable, true);
    assert.equal(await shown('us'), true);
  });

  it('says so where the field is documented', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, { description?: string }> } }> }> }>>;
    };
    const field = doc.paths['/operator/regions/{id}']!.get!.responses['200']!.content['application/json']!.schema.properties.flow_capable!;
    assert.match(field.description ?? '', /`local`.*`flow\.enabled`/);
  });
});

describe('agents', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('registers an agent with a one-time sm_agent_ token, lists it without the token, and deletes it', async () => {
    const res = await t.operator('POST', '/operator/agents', { region_id: 'local', name: 'probe-1' });
    assert.equal(res.statusCode, 201, res.body);
    const agent = res.json() as { id: string; region_id: string; token: string };
    assert.deepEqual(Object.keys(agent).sort(), ['id', 'region_id', 'token']);
    assert.equal(agent.region_id, 'local');
    assert.match(agent.token, /^sm_agent_[A-Za-z0-9_-]{43}$/);
    const [row] = await t.services.db.query<{ whole: string; token_hash: string }>('SELECT token_hash, row_to_json(a)::text AS whole FROM agents a WHERE id = $1', [agent.id]);
    assert.match(row!.token_hash, /^\$argon2id\$/);
    assert.ok(!row!.whole.includes(agent.token));

    assert.equal(res.headers.location, `/operator/agents/${agent.id}`);
    const one = await t.operator('GET', res.headers.location as string);
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(Object.keys(one.json() as object).sort(), ['created_at', 'id', 'last_seen_at', 'name', 'prefix', 'region_id']);
    assert.equal((one.json() as { prefix: string }).prefix, agent.token.slice(0, 17));
    assert.ok(!one.body.includes(agent.token));

    const list = await t.operator('GET', '/operator/agents');
    assert.equal(list.statusCode, 200);
    const agents = (list.json() as { agents: Array<Record<string, unknown>> }).agents;
    assert.deepEqual(agents.map((a) => [a.id, a.region_id, a.name]), [[agent.id, 'local', 'probe-1']]);
    assert.ok(!('token' in agents[0]!) && !('token_hash' in agents[0]!));
    assert.ok(!list.body.includes(agent.token));

    assert.equal((await t.operator('DELETE', `/operator/agents/${agent.id}`)).statusCode, 204);
    assert.equal((await t.operator('DELETE', `/operator/agents/${agent.id}`)).statusCode, 404);
    assert.equal((await t.operator('GET', `/operator/agents/${agent.id}`)).statusCode, 404);
    assert.equal((await t.operator('GET', '/operator/agents/not-a-uuid')).statusCode, 404);
    assert.deepEqual((await t.operator('GET', '/operator/agents')).json(), { agents: [] });
    assert.equal((await t.operator('DELETE', '/operator/agents/not-a-uuid')).statusCode, 404);
  });

  it('refuses a blank agent name with 400 naming it', async () => {
    const res = await t.operator('POST', '/operator/agents', { region_id: 'local', name: '   ' });
    assert.deepEqual([res.statusCode, (res.json() as ErrorBody).error.field], [400, 'name']);
  });

  it('refuses an unknown region with 422 REGION_INVALID', async () => {
    const res = await t.operator('POST', '/operator/agents', { region_id: 'mars-1', name: 'probe' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual((res.json() as ErrorBody).error.code, 'REGION_INVALID');
    assert.equal((res.json() as ErrorBody).error.field, 'region_id');
    assert.deepEqual((await t.operator('GET', '/operator/agents')).json(), { agents: [] });
  });
});
