// The resource types the lifecycle controllers read and write, derived from the API kinds.
import { ServerKind } from '../../api/metal/v1alpha1/server.js';
import { ServerClaimKind } from '../../api/metal/v1alpha1/serverclaim.js';
import { BMCKind } from '../../api/metal/v1alpha1/bmc.js';
import { ServerMaintenanceKind } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { ServerDisruptionBudgetKind } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerClaimDisruptionBudgetKind } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { ServerBootKind } from '../../api/maintenance/v1alpha1/serverboot.js';
import { resourceOf } from '../../lib/kube/resources.js';

export const ServerResource = resourceOf(ServerKind);
export const ServerClaimResource = resourceOf(ServerClaimKind);
export const BMCResource = resourceOf(BMCKind);
export const ServerMaintenanceResource = resourceOf(ServerMaintenanceKind);
export const ServerDisruptionBudgetResource = resourceOf(ServerDisruptionBudgetKind);
export const ServerClaimDisruptionBudgetResource = resourceOf(ServerClaimDisruptionBudgetKind);
export const ServerBootResource = resourceOf(ServerBootKind);
