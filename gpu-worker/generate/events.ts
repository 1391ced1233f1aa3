import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type GenerateEvent, GenerateEventSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

type EventInit = NonNullable<MessageInitShape<typeof GenerateEventSchema>["event"]>;

/** Build one GenerateEvent from its oneof case. */
export function generateEvent(event: EventInit): GenerateEvent {
  return create(GenerateEventSchema, { event });
}
