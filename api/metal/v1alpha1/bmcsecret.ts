// BMCSecret (metal.ironcore.dev/v1alpha1): BMC credentials, shaped like a core Secret (data,
// stringData, immutable, type at the top level, no spec), cluster-scoped as upstream has it.
import { Type } from '@sinclair/typebox';
import { defineKind, StringMap, type ObjectOf } from '../../schema/index.js';
import { METAL_GROUP, METAL_VERSION } from './group.js';

/** Once immutable is true, nothing but metadata may change (as for a core Secret). */
const whenImmutable = (rule: string) => `!has(oldSelf.immutable) || !oldSelf.immutable || (${rule})`;

export const BMCSecretKind = defineKind({
  group: METAL_GROUP,
  version: METAL_VERSION,
  kind: 'BMCSecret',
  plural: 'bmcsecrets',
  shortNames: ['bmcsec'],
  categories: ['metal'],
  scope: 'Cluster',
  description: 'BMCSecret holds the credentials metal-operator uses for a BMC (keys username and password).',
  body: {
    data: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        additionalProperties: { type: 'string', format: 'byte' },
        description: 'Credentials, base64-encoded, e.g. username and password.',
      }),
    ),
    stringData: Type.Optional(StringMap({ description: 'Credentials in plain text; read like data.' })),
    immutable: Type.Optional(
      Type.Boolean({ description: 'When true, data and stringData can no longer change.' }),
    ),
    type: Type.Optional(Type.String({ description: 'Type of the secret, free-form as for a core Secret.' })),
  },
  rules: [
    {
      rule: whenImmutable('has(self.immutable) && self.immutable'),
      message: 'immutable cannot be unset once true',
      fieldPath: '.immutable',
    },
    {
      rule: whenImmutable(
        'has(self.data) == has(oldSelf.data) && (!has(self.data) || self.data == oldSelf.data)',
      ),
      message: 'data is immutable when immutable is true',
      fieldPath: '.data',
    },
    {
      rule: whenImmutable(
        'has(self.stringData) == has(oldSelf.stringData) && (!has(self.stringData) || self.stringData == oldSelf.stringData)',
      ),
      message: 'stringData is immutable when immutable is true',
      fieldPath: '.stringData',
    },
  ],
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.type' },
    { name: 'Immutable', type: 'boolean', jsonPath: '.immutable' },
  ],
});
export type BMCSecret = ObjectOf<typeof BMCSecretKind>;
