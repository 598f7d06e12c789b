/** Alert channels and deliveries: routes, the delivery worker, the channel registry and senders. What other folders may use: everything else here is this folder's own. */
export { deleteSubscription, resealChannelSecrets } from './channel-repository.js';
export { alertChannelRoutes } from './channel-routes.js';
export { sendMail } from './channels/email.js';
export { DeliveryQueue, startDeliveryWorker, undeliveredNotifications } from './deliveries.js';
export { alertLocationChange, locationMessage, startLocationAlertWorker } from './location-alerts.js';
export { alertRoutes } from './routes.js';
