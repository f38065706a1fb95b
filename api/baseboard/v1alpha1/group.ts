export const BASEBOARD_GROUP = 'baseboard.metal.ironcore.dev';
export const BASEBOARD_VERSION = 'v1alpha1';
