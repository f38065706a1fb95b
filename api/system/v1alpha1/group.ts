export const SYSTEM_GROUP = 'system.metal.ironcore.dev';
export const SYSTEM_VERSION = 'v1alpha1';
