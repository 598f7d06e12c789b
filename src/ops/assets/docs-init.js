// /docs/try: Swagger UI over this service's own /openapi.json, every asset served from here (it reads the whole
// document before it shows anything; /docs is the page to read). /docs/try#/<tag>/<operationId> opens one operation.
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  filter: true,
  // No calls to swagger.io's online validator.
  validatorUrl: null,
});
