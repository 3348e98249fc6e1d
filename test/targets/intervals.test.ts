// Heartbeat cadence (monitoring-api.md, "Limits": not coarser than one tenth of period + grace,
// held between 60 s and 300 s, or the plan floor if higher). Pure logic: period and grace in ms.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heartbeatCadence } from '../../src/targets/intervals.js';

describe('targets: heartbeat cadence', () => {
  it('is never coarser than a tenth of period + grace: a fractional tenth rounds down', () => {
    assert.equal(heartbeatCadence({ period: 1_000_005, grace: 0 }, null), 100, 'a tenth is 100.0005 s');
    assert.equal(heartbeatCadence({ period: 900_000, grace: 9_999 }, null), 90, 'a tenth is 90.9999 s');
    assert.equal(heartbeatCadence({ period: 1_000_000, grace: 0 }, null), 100, 'an exact tenth is kept');
  });

  it('is held between 60 s and 300 s', () => {
    assert.equal(heartbeatCadence({ period: 60_000, grace: 0 }, null), 60);
    assert.equal(heartbeatCadence({ period: 609_999, grace: 0 }, null), 60, 'a tenth of 60.9999 s');
    assert.equal(heartbeatCadence({ period: 86_400_000, grace: 3_600_000 }, null), 300);
  });

  it('takes the plan floor when it is higher, however fine the window', () => {
    assert.equal(heartbeatCadence({ period: 1_000_005, grace: 0 }, 180), 180);
    assert.equal(heartbeatCadence({ period: 86_400_000, grace: 0 }, 600), 600);
    assert.equal(heartbeatCadence({ period: 1_000_005, grace: 0 }, 30), 100, 'a lower floor changes nothing');
  });
});
