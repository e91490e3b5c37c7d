/*
 * The entry script of the `service-consent-field` element ({base_url}/sdk/v1/service-field.js).
 *
 * The element is not built yet. Until it is, this module defines nothing and says so once on the
 * console, so a page that loads it learns why no field appears instead of getting an element that
 * pretends to capture. Capture consent with `forms.attach({ map })` from service.js meanwhile.
 */
console.error(
  'service-field.js: the service-consent-field element is not available yet; nothing was defined. ' +
    'Capture consent with Service.forms.attach({ flowId, form, map }) from service.js meanwhile.',
);

export {};
