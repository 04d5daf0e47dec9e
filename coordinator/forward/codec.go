package forward

import "fmt"

// frame is one gRPC message as it travels on the wire: a follower never
// decodes what it relays, so it relays any method of any service, the job
// kinds' own included.
type frame struct{ payload []byte }

// rawCodec passes frames through as bytes. It is set on the forwarding
// server and its calls only (ForceServerCodec, ForceCodec), never
// registered: the process's "proto" codec stays protobuf. It is named
// "proto" so that the content type sent to the leader is the ordinary
// application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("forward: cannot marshal %T", v)
	}
	return f.payload, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("forward: cannot unmarshal into %T", v)
	}
	// gRPC hands over a buffer of its own for this message alone (the
	// old Codec interface materializes one), so it is kept, not copied.
	f.payload = data
	return nil
}
