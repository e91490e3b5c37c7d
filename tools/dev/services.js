// The eight services of a country, as built packages. The gateway is listed apart: it is the
// only one with an HTTP port and its own bootstrap.
const { decisionsService } = require('@dcr/app-decisions');
const { receiptsService } = require('@dcr/app-receipts');
const { auditChainService } = require('@dcr/app-audit-chain');
const { residencyRouterService } = require('@dcr/app-residency-router');
const { webhooksService } = require('@dcr/app-webhooks');
const { oidcService } = require('@dcr/app-oidc');
const { mcpGatewayService } = require('@dcr/app-mcp-gateway');
const gatewayParts = require('@dcr/app-gateway');

const serviceDefinitions = [
  residencyRouterService,
  decisionsService,
  receiptsService,
  auditChainService,
  webhooksService,
  oidcService,
  mcpGatewayService,
];

module.exports = { serviceDefinitions, gatewayParts };
