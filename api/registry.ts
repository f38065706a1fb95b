// Every kind this project defines. The CRD generator, the examples test and the installers read
// this list; adding a kind here is all it takes to ship its CRD.
import type { KindDefinition } from './schema/kind.js';
import { ServerKind } from './metal/v1alpha1/server.js';
import { ServerClaimKind } from './metal/v1alpha1/serverclaim.js';
import { ServerMaintenanceKind } from './maintenance/v1alpha1/servermaintenance.js';
import { ServerDisruptionBudgetKind } from './maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerClaimDisruptionBudgetKind } from './maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { ServerBootKind } from './maintenance/v1alpha1/serverboot.js';

export const ALL_KINDS: readonly KindDefinition[] = [
  ServerKind,
  ServerClaimKind,
  ServerMaintenanceKind,
  ServerDisruptionBudgetKind,
  ServerClaimDisruptionBudgetKind,
  ServerBootKind,
] as unknown as readonly KindDefinition[];

/** Looks a kind up by apiVersion and kind, as they appear on an object. */
export function kindFor(apiVersion: string, kind: string): KindDefinition | undefined {
  return ALL_KINDS.find((k) => k.apiVersion === apiVersion && k.kind === kind);
}
