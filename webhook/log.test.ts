import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bufferedLogger, isoTimeCached, reviewLogger } from './log.js';

const dir = mkdtempSync(join(tmpdir(), 'webhook-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('bufferedLogger', () => {
  it('holds lines until a flush, and the timer flushes on its own', async () => {
    const file = join(dir, 'a.log');
    const log = bufferedLogger('webhook', { dest: file, flushMs: 30 });
    log.logger.info({ uid: 'u1' }, 'denied');
    expect(lines(file)).toEqual([]);
    await new Promise((r) => setTimeout(r, 120));
    expect(lines(file)).toEqual([expect.objectContaining({ uid: 'u1', msg: 'denied', name: 'webhook' })]);
    log.logger.info('stopping');
    log.close();
    expect(lines(file).map((l) => l.msg)).toEqual(['denied', 'stopping']);
  });

  it('redacts like every other logger of the project', () => {
    const file = join(dir, 'b.log');
    const log = bufferedLogger('webhook', { dest: file });
    log.logger.info({ headers: { authorization: 'Bearer x' }, data: { k: 'v' } }, 'careful');
    log.close();
    expect(lines(file)[0]).toMatchObject({ headers: { authorization: '[redacted]' }, data: '[redacted]' });
  });
});

describe('reviewLogger', () => {
  it('writes a review line exactly as the redacting logger does, and redacts nothing else', () => {
    const file = join(dir, 'c.log');
    const log = bufferedLogger('webhook', { dest: file });
    const line = {
      uid: 'u2',
      type: 'validate',
      rule: 'eviction',
      resource: 'maintenance.metal.ironcore.dev/v1alpha1/servermaintenances/status',
      object: 'ops/m1',
      allowed: false,
      code: 'METAL_ERR_BUDGET_EXHAUSTED',
      ms: 1.5,
      fields: ['status.state'],
    };
    log.logger.info(line, 'denied');
    reviewLogger(log.logger).info(line, 'denied');
    log.close();
    const [redacting, review] = lines(file).map(({ time: _t, ...rest }) => rest);
    expect(review).toEqual(redacting);
    expect(review).toMatchObject(line);
  });
});

describe('isoTimeCached', () => {
  it('writes what pino.stdTimeFunctions.isoTime writes, across seconds and milliseconds', () => {
    let now = 0;
    const time = isoTimeCached(() => now);
    for (const t of [
      0, 7, 59, 999, 1000, 1001, 1_712_345_678_901, 1_712_345_678_999, 1_712_345_679_000, 1_712_345_679_042,
    ]) {
      now = t;
      expect(time()).toBe(`,"time":"${new Date(t).toISOString()}"`);
    }
  });
});
