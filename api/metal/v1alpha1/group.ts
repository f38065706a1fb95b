export const METAL_GROUP = 'metal.ironcore.dev';
export const METAL_VERSION = 'v1alpha1';
