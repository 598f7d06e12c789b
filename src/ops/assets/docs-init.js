// The API reference: Swagger UI over this service's own /openapi.json, every asset served from here.
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // No calls to swagger.io's online validator.
  validatorUrl: null,
});
