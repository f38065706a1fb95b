// Our CRDs must keep every field metal-operator's own CRDs declare, with the same type: the API server
// prunes what a schema lacks, so a missing path is upstream data lost without an error, and another
// type is an upstream object refused. Read from the pinned release in the Go module cache at test time
// (scripts/lib/metal-operator.sh --module-dir), compared path by path with manifests/crds (generated
// from api/). Known deliberate differences (list types, enums, stricter validation) are not types.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { upstreamCRDs, type UpstreamCRD } from '../e2e/peers/metal-operator-module.js';
import { fieldTypes, supersetGaps } from './testdata/field-paths.js';

const OURS = join(import.meta.dirname, '..', 'manifests', 'crds');

/**
 * metal-operator v0.7.0's kinds we do not ship: its manager needs their CRDs installed from its own
 * release (docs/compatibility.md, install option A). A new upstream kind shows up here first.
 */
const NOT_OURS = [
  'metal.ironcore.dev_biossettings.yaml',
  'metal.ironcore.dev_biossettingssets.yaml',
  'metal.ironcore.dev_biosversions.yaml',
  'metal.ironcore.dev_biosversionsets.yaml',
  'metal.ironcore.dev_bmcsettings.yaml',
  'metal.ironcore.dev_bmcsettingssets.yaml',
  'metal.ironcore.dev_bmcusers.yaml',
  'metal.ironcore.dev_bmcversions.yaml',
  'metal.ironcore.dev_bmcversionsets.yaml',
  'metal.ironcore.dev_endpoints.yaml',
  'metal.ironcore.dev_serverreadinessrules.yaml',
];

const upstream = upstreamCRDs();
const ours = new Map(
  readdirSync(OURS)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => [f, parse(readFileSync(join(OURS, f), 'utf8')) as UpstreamCRD] as const),
);
const shared = [...upstream.keys()].filter((f) => ours.has(f));

const schemaOf = (crd: UpstreamCRD, version: string) =>
  crd.spec.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;

describe('our CRDs against metal-operator v0.7.0 (from the Go module cache)', () => {
  it('ship every metal.ironcore.dev kind but the ones its release installs itself', () => {
    expect([...upstream.keys()].filter((f) => !ours.has(f))).toEqual(NOT_OURS);
    expect(shared).toEqual([
      'metal.ironcore.dev_bmcs.yaml',
      'metal.ironcore.dev_bmcsecrets.yaml',
      'metal.ironcore.dev_serverbootconfigurations.yaml',
      'metal.ironcore.dev_serverclaims.yaml',
      'metal.ironcore.dev_servermaintenances.yaml',
      'metal.ironcore.dev_servers.yaml',
    ]);
  });

  describe.each(shared)('%s', (file) => {
    const theirs = upstream.get(file)!;
    const mine = ours.get(file)!;

    it('has the same kind, scope and versions', () => {
      expect(mine.spec.names.kind).toBe(theirs.spec.names.kind);
      expect(mine.spec.scope).toBe(theirs.spec.scope);
      expect(mine.spec.versions.map((v) => v.name)).toEqual(theirs.spec.versions.map((v) => v.name));
    });

    it.each(theirs.spec.versions.map((v) => v.name))(
      '%s: keeps every upstream field path with its type',
      (v) => {
        const up = schemaOf(theirs, v);
        const me = schemaOf(mine, v);
        expect(up).toBeDefined();
        expect(me).toBeDefined();
        // A sanity floor: the walk really sees upstream's fields (a broken reader would find no gaps).
        expect(fieldTypes(up!).size).toBeGreaterThan(5);
        expect(supersetGaps(up!, me!)).toEqual([]);
      },
    );
  });
});
