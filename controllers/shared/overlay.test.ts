import type { KubeObject } from '../../api/schema/meta.js';
import { withoutManagedFields } from '../../lib/kube/informer.js';
import { WriteOverlay } from './overlay.js';

type Obj = KubeObject & { status?: { cell?: string } };

const obj = (rv: string, cell: string, uid = 'u1'): Obj => ({
  metadata: { name: 'run', uid, resourceVersion: rv },
  status: { cell },
});

describe('WriteOverlay', () => {
  test('a cache one write behind reads as the write, until the watch delivers it', () => {
    const o = new WriteOverlay<Obj>();
    o.wrote(obj('12', 'Completed'));
    expect(o.fresh(obj('10', 'InProgress'))?.status?.cell).toBe('Completed');
    expect(o.fresh(obj('11', 'InProgress'))?.status?.cell).toBe('Completed');
    expect(o.fresh(obj('12', 'Completed'))?.metadata.resourceVersion).toBe('12');
    expect(o.size).toBe(0);
  });

  test('a cache past the write (someone wrote after us) wins and drops the write', () => {
    const o = new WriteOverlay<Obj>();
    o.wrote(obj('12', 'Completed'));
    expect(o.fresh(obj('15', 'Pending'))?.status?.cell).toBe('Pending');
    expect(o.size).toBe(0);
  });

  test('an older answer never replaces a newer one (two writes, answers out of order)', () => {
    const o = new WriteOverlay<Obj>();
    o.wrote(obj('14', 'Completed'));
    o.wrote(obj('12', 'InProgress'));
    expect(o.fresh(obj('10', 'Pending'))?.metadata.resourceVersion).toBe('14');
  });

  test('an object made again under the name is the new one, not our old write', () => {
    const o = new WriteOverlay<Obj>();
    o.wrote(obj('12', 'Completed'));
    expect(o.fresh(obj('3', 'Pending', 'u2'))?.metadata.uid).toBe('u2');
    expect(o.fresh(undefined)).toBeUndefined();
  });

  test('forget drops the write; a failed write (no answer) remembers nothing', () => {
    const o = new WriteOverlay<Obj>();
    o.wrote(undefined);
    expect(o.size).toBe(0);
    o.wrote(obj('12', 'Completed'));
    o.forget({ name: 'run' });
    expect(o.fresh(obj('10', 'InProgress'))?.status?.cell).toBe('InProgress');
  });

  test('the write is kept in the shape the informer keeps (transform applied)', () => {
    const o = new WriteOverlay<Obj>(withoutManagedFields);
    const written = obj('12', 'Completed');
    o.wrote({ ...written, metadata: { ...written.metadata, managedFields: [{}] } });
    expect(o.fresh(obj('10', 'InProgress'))?.metadata.managedFields).toBeUndefined();
  });
});
