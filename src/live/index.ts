/** Live messages: the MQTT broker clients log in to, and the publisher any process uses. What other folders may use: everything else here is this folder's own. */
export { attachLiveBroker } from './broker.js';
export { LivePublisher } from './publisher.js';
