// The log endpoint's tailLines, as `kubectl logs --tail` asks for it.
import { tail } from './log-server.js';

describe('tail', () => {
  const text = 'a\nb\nc\n';
  it('keeps the last N lines, ending with a newline', () => {
    expect(tail(text, 2)).toBe('b\nc\n');
    expect(tail(text, 0)).toBe('');
  });
  it('keeps everything without a limit or with a limit past the start', () => {
    expect(tail(text, undefined)).toBe(text);
    expect(tail(text, 10)).toBe(text);
  });
  it('treats a last line without newline as a line', () => {
    expect(tail('a\nb', 1)).toBe('b\n');
  });
});
