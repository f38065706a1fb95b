// Cluster mode reads a binary's pino lines from pods/log text (installedLogs): JSON lines kept, the rest
// (a runtime's banner, a line cut off by a kill) skipped.
import { jsonLines } from './installed.js';

describe('jsonLines', () => {
  it('parses the JSON lines and skips the others', () => {
    const text = [
      '{"level":30,"msg":"started"}',
      'node: warning',
      '{"level":40,"msg":"cut',
      '',
      '{"a":1}',
    ].join('\n');
    expect(jsonLines(text)).toEqual([{ level: 30, msg: 'started' }, { a: 1 }]);
  });
});
