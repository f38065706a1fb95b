// What a boot image must look like, by boot method (docs/boot.md): VirtualMedia and UefiHttp hand an
// http(s) URL to the BMC or the host's firmware, which fetch it (controllers/boot refuses any other
// scheme); Pxe hands an OCI image reference to boot-operator through a ServerBootConfiguration. Checked
// at write time, so a maintenance with an image no method can boot never takes a grant and parks a
// server before the boot fails.
import { check, quoted, type TwinnedRule } from '../../schema/checks.js';

/** Longest image: a signed URL with a session token fits; HTTP servers commonly cap a request line at 8 KiB. */
export const IMAGE_MAX = 4096;

/** http:// or https://, a non-empty authority, no whitespace. */
const HTTP_URL_RE = '^https?://[^/?#\\s]+([/?#]\\S*)?$';

// The OCI distribution reference grammar (distribution/reference): [domain/]path[:tag][@digest].
const DOMAIN_COMPONENT = '([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `${DOMAIN_COMPONENT}(\\.${DOMAIN_COMPONENT})*(:[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const OCI_REF_RE = `^(${DOMAIN}/)?${PATH_COMPONENT}(/${PATH_COMPONENT})*(:${TAG})?(@${DIGEST})?$`;

const httpUrl = new RegExp(HTTP_URL_RE);
const ociRef = new RegExp(OCI_REF_RE);
const cel = (re: string) => `'${re.replace(/\\/g, '\\\\')}'`;

interface BootImageLike {
  image?: unknown;
  method?: unknown;
}
const asBoot = (self: unknown): BootImageLike => (typeof self === 'object' && self !== null ? self : {});
/** `method` unset counts as VirtualMedia, the default ServerMaintenance.spec.boot.method takes. */
const isPxe = (b: BootImageLike) => b.method === 'Pxe';
const CEL_IS_PXE = "(has(self.method) && self.method == 'Pxe')";
const imageShown = quoted('self.image', (self) => asBoot(self).image);

/** The rules of an object with `image` and `method` (ServerMaintenance.spec.boot, ServerBoot.spec). */
export function bootImageRules(): TwinnedRule[] {
  return [
    check({
      rule: `${CEL_IS_PXE} || !has(self.image) || self.image.matches(${cel(HTTP_URL_RE)})`,
      holds: (self) => {
        const b = asBoot(self);
        return isPxe(b) || typeof b.image !== 'string' || httpUrl.test(b.image);
      },
      message:
        'image {value} is not an http:// or https:// URL: VirtualMedia and UefiHttp boot from a URL the BMC or the firmware fetches (e.g. https://images.example.com/maintenance.iso); Pxe takes an OCI image reference',
      shown: imageShown,
      fieldPath: '.image',
    }),
    check({
      rule: `!${CEL_IS_PXE} || !has(self.image) || self.image.matches(${cel(OCI_REF_RE)})`,
      holds: (self) => {
        const b = asBoot(self);
        return !isPxe(b) || typeof b.image !== 'string' || ociRef.test(b.image);
      },
      message:
        'image {value} is not an OCI image reference: Pxe boots what boot-operator serves from an image like ghcr.io/ironcore-dev/maintenance:1 ([registry/]repository[:tag][@digest])',
      shown: imageShown,
      fieldPath: '.image',
    }),
  ];
}
