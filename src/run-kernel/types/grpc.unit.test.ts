import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundPolicy } from '../../platform/outbound.js';
import { protoDefinition, runGrpc } from './grpc.js';

const PROTO = `syntax = "proto3";
import "google/protobuf/timestamp.proto";
package shop;
message Ask { string name = 1; }
message Answer { string greeting = 1; google.protobuf.Timestamp at = 2; }
service Greeter { rpc Greet (Ask) returns (Answer); }
`;

/**
 * gRPC method calls from a check's proto: the proto is parsed from its text (never a file), and an import of
 * anything but the bundled google/protobuf definitions is refused without reading it.
 */
describe('gRPC method checks', () => {
  let server: grpc.Server;
  let port: number;
  beforeAll(async () => {
    server = new grpc.Server();
    const loaded = grpc.loadPackageDefinition(protoDefinition(PROTO)) as unknown as { shop: { Greeter: { service: grpc.ServiceDefinition } } };
    server.addService(loaded.shop.Greeter.service, {
      Greet: (call: grpc.ServerUnaryCall<{ name: string }, unknown>, done: grpc.sendUnaryData<unknown>) =>
        done(null, { greeting: `hello ${call.request.name}` }),
    });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
  });
  afterAll(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));

  const policy = new OutboundPolicy({ allowPublic: false, allow: ['127.0.0.0/8'] });
  const run = (protoContent: string) =>
    runGrpc({
      check: {
        id: 'c',
        accountId: 'a',
        name: 'greeter',
        checkType: 'GRPC',
        activated: true,
        tags: [],
        groupId: null,
        variables: {},
        secrets: [],
        locations: ['eu-west-1'],
        runParallel: false,
        data: {
          request: {
            url: '127.0.0.1',
            port,
            grpcConfig: { mode: 'BEHAVIOR', tls: false, method: 'shop.Greeter/Greet', protoContent, message: '{"name":"cart"}' },
          },
        },
      },
      location: 'eu-west-1',
      resultId: 'r',
      attempt: 1,
      policy,
    });

  it('calls the method the proto names, with a bundled google/protobuf import', async () => {
    const outcome = await run(PROTO);
    expect(outcome.error).toBeUndefined();
    expect(outcome.hasFailures).toBe(false);
    const result = (outcome.detail as { grpcCheckResult: { response: { responseMessage: string } } }).grpcCheckResult;
    expect(JSON.parse(result.response.responseMessage)).toMatchObject({ greeting: 'hello cart' });
  });

  it('an import of a host file is refused by name, and nothing of that file shows', async () => {
    for (const target of ['/etc/passwd', '../../../../etc/hostname', '/proc/self/environ']) {
      const outcome = await run(
        `syntax = "proto3"; import "${target}"; package shop; message Ask { string name = 1; } service Greeter { rpc Greet (Ask) returns (Ask); }`,
      );
      expect(outcome.hasFailures).toBe(true);
      expect(outcome.error).toBe(
        `CONFIG: protoContent imports "${target}": only google/protobuf/{any,duration,empty,field_mask,struct,timestamp,wrappers}.proto can be imported; put the other definitions in the proto itself`,
      );
      expect(JSON.stringify(outcome)).not.toMatch(/root:|DATABASE_URL/);
    }
  });

  it('a proto longer than the limit is refused before it is parsed', async () => {
    const outcome = await run(`${PROTO}\n// ${'x'.repeat(262_144)}`);
    expect(outcome.error).toBe('CONFIG: protoContent is longer than 262144 characters');
  });
});
