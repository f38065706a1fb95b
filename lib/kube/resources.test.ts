import { describe, expect, it } from '@jest/globals';
import { fresher, isNewer } from './resources.js';

const obj = (uid: string, resourceVersion: string) => ({ metadata: { uid, resourceVersion } });

describe('resourceVersions', () => {
  it('compares etcd revisions as numbers, and cannot order other strings', () => {
    expect(isNewer('10', '9')).toBe(true);
    expect(isNewer('9', '10')).toBe(false);
    expect(isNewer('5', undefined)).toBe(true);
    expect(isNewer(undefined, '5')).toBe(false);
    expect(isNewer('b', 'a')).toBe(false);
  });

  it('prefers our own copy only while it is the same object at a newer version', () => {
    const cached = obj('u1', '10');
    expect(fresher(cached, obj('u1', '11'))).toEqual(obj('u1', '11'));
    expect(fresher(cached, obj('u1', '9'))).toBe(cached);
    expect(fresher(cached, obj('u2', '12'))).toBe(cached); // recreated under the same name
    expect(fresher(undefined, obj('u1', '11'))).toBeUndefined(); // gone from the cache: read to know
    expect(fresher(cached, undefined)).toBe(cached);
  });
});
