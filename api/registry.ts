// Every kind this project defines. The CRD generator, the examples test and the installers read
// this list; adding a kind here is all it takes to ship its CRD.
import type { KindDefinition } from './schema/kind.js';
import { ServerKind } from './metal/v1alpha1/server.js';
import { ServerClaimKind } from './metal/v1alpha1/serverclaim.js';
import { ServerMaintenanceKind } from './maintenance/v1alpha1/servermaintenance.js';
import { ServerDisruptionBudgetKind } from './maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerClaimDisruptionBudgetKind } from './maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { ServerBootKind } from './maintenance/v1alpha1/serverboot.js';
import { BMCKind } from './metal/v1alpha1/bmc.js';
import { BMCSecretKind } from './metal/v1alpha1/bmcsecret.js';
import { ServerBootConfigurationKind } from './metal/v1alpha1/serverbootconfiguration.js';
import { BIOSSettingsKind } from './system/v1alpha1/biossettings.js';
import { BIOSVersionKind } from './system/v1alpha1/biosversion.js';
import { BIOSSettingsSetKind } from './system/v1alpha1/biossettingsset.js';
import { BIOSVersionSetKind } from './system/v1alpha1/biosversionset.js';
import { BMCSettingsKind } from './baseboard/v1alpha1/bmcsettings.js';
import { BMCVersionKind } from './baseboard/v1alpha1/bmcversion.js';
import { BMCSettingsSetKind } from './baseboard/v1alpha1/bmcsettingsset.js';
import { BMCVersionSetKind } from './baseboard/v1alpha1/bmcversionset.js';
import { MaintenancePipelineKind } from './maintenance/v1alpha1/maintenancepipeline.js';
import { MaintenancePipelineRunKind } from './maintenance/v1alpha1/maintenancepipelinerun.js';
import { LegacyServerMaintenanceKind } from './legacy/v1alpha1/servermaintenance.js';

export const ALL_KINDS: readonly KindDefinition[] = [
  ServerKind,
  ServerClaimKind,
  ServerMaintenanceKind,
  ServerDisruptionBudgetKind,
  ServerClaimDisruptionBudgetKind,
  ServerBootKind,
  BMCKind,
  BMCSecretKind,
  ServerBootConfigurationKind,
  BIOSSettingsKind,
  BIOSVersionKind,
  BIOSSettingsSetKind,
  BIOSVersionSetKind,
  BMCSettingsKind,
  BMCVersionKind,
  BMCSettingsSetKind,
  BMCVersionSetKind,
  MaintenancePipelineKind,
  MaintenancePipelineRunKind,
  LegacyServerMaintenanceKind,
];

/** Looks a kind up by apiVersion and kind, as they appear on an object. */
export function kindFor(apiVersion: string, kind: string): KindDefinition | undefined {
  return ALL_KINDS.find((k) => k.apiVersion === apiVersion && k.kind === kind);
}
