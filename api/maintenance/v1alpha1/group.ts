export const MAINTENANCE_GROUP = 'maintenance.metal.ironcore.dev';
export const MAINTENANCE_VERSION = 'v1alpha1';
