import { resourceOfPath } from './client.js';

describe('resourceOfPath', () => {
  test('names the resource and subresource of core and group paths', () => {
    expect(resourceOfPath('/api/v1/namespaces/a/configmaps/x')).toEqual({
      resource: 'configmaps',
      collection: false,
    });
    expect(resourceOfPath('/api/v1/namespaces/a/configmaps')).toEqual({
      resource: 'configmaps',
      collection: true,
    });
    expect(resourceOfPath('/apis/metal.ironcore.dev/v1alpha1/servers/s1/status')).toEqual({
      resource: 'servers/status',
      collection: false,
    });
    expect(resourceOfPath('/apis/metal.ironcore.dev/v1alpha1/servers?limit=5')).toEqual({
      resource: 'servers',
      collection: true,
    });
    expect(resourceOfPath('/api/v1/namespaces')).toEqual({ resource: 'namespaces', collection: true });
    expect(resourceOfPath('/api/v1/namespaces/a')).toEqual({ resource: 'namespaces', collection: false });
  });
});
