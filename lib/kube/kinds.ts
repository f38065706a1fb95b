// The REST resources of this project's kinds, derived from their API definitions: the one table every
// binary (webhook, controllers, CLI) and the tests take resource types from.
import { ServerKind } from '../../api/metal/v1alpha1/server.js';
import { ServerClaimKind } from '../../api/metal/v1alpha1/serverclaim.js';
import { BMCKind } from '../../api/metal/v1alpha1/bmc.js';
import { BMCSecretKind } from '../../api/metal/v1alpha1/bmcsecret.js';
import { ServerBootConfigurationKind } from '../../api/metal/v1alpha1/serverbootconfiguration.js';
import { ServerMaintenanceKind } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { ServerDisruptionBudgetKind } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerClaimDisruptionBudgetKind } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { ServerBootKind } from '../../api/maintenance/v1alpha1/serverboot.js';
import { LegacyServerMaintenanceKind } from '../../api/legacy/v1alpha1/servermaintenance.js';
import { BIOSVersionKind } from '../../api/system/v1alpha1/biosversion.js';
import { BIOSSettingsKind } from '../../api/system/v1alpha1/biossettings.js';
import { BMCVersionKind } from '../../api/baseboard/v1alpha1/bmcversion.js';
import { BMCSettingsKind } from '../../api/baseboard/v1alpha1/bmcsettings.js';
import { MaintenancePipelineKind } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { MaintenancePipelineRunKind } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { BIOSVersionSetKind } from '../../api/system/v1alpha1/biosversionset.js';
import { BIOSSettingsSetKind } from '../../api/system/v1alpha1/biossettingsset.js';
import { BMCVersionSetKind } from '../../api/baseboard/v1alpha1/bmcversionset.js';
import { BMCSettingsSetKind } from '../../api/baseboard/v1alpha1/bmcsettingsset.js';
import { resourceOf } from './resources.js';

export const ServerResource = resourceOf(ServerKind);
export const ServerClaimResource = resourceOf(ServerClaimKind);
export const BMCResource = resourceOf(BMCKind);
export const BMCSecretResource = resourceOf(BMCSecretKind);
export const ServerBootConfigurationResource = resourceOf(ServerBootConfigurationKind);
export const ServerMaintenanceResource = resourceOf(ServerMaintenanceKind);
export const ServerDisruptionBudgetResource = resourceOf(ServerDisruptionBudgetKind);
export const ServerClaimDisruptionBudgetResource = resourceOf(ServerClaimDisruptionBudgetKind);
export const ServerBootResource = resourceOf(ServerBootKind);
export const LegacyServerMaintenanceResource = resourceOf(LegacyServerMaintenanceKind);
export const BIOSVersionResource = resourceOf(BIOSVersionKind);
export const BIOSSettingsResource = resourceOf(BIOSSettingsKind);
export const BMCVersionResource = resourceOf(BMCVersionKind);
export const BMCSettingsResource = resourceOf(BMCSettingsKind);
export const MaintenancePipelineResource = resourceOf(MaintenancePipelineKind);
export const MaintenancePipelineRunResource = resourceOf(MaintenancePipelineRunKind);
export const BIOSVersionSetResource = resourceOf(BIOSVersionSetKind);
export const BIOSSettingsSetResource = resourceOf(BIOSSettingsSetKind);
export const BMCVersionSetResource = resourceOf(BMCVersionSetKind);
export const BMCSettingsSetResource = resourceOf(BMCSettingsSetKind);

/** The firmware kinds and their Sets, by kind name (the firmware controller and the CLI list them). */
export const FirmwareResources = {
  BIOSVersion: BIOSVersionResource,
  BIOSSettings: BIOSSettingsResource,
  BMCVersion: BMCVersionResource,
  BMCSettings: BMCSettingsResource,
} as const;
export const FirmwareSetResources = {
  BIOSVersionSet: BIOSVersionSetResource,
  BIOSSettingsSet: BIOSSettingsSetResource,
  BMCVersionSet: BMCVersionSetResource,
  BMCSettingsSet: BMCSettingsSetResource,
} as const;
