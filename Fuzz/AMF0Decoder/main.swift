// Fuzz the AMF0 decoder (and AMF3 behind the avmplus marker) with command and data message bodies.
// Run: Fuzz/run.sh AMF0Decoder -max_total_time=600
import StreamKitAMF
import StreamKitCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let decoder = AMF0Decoder(maximumDepth: 32, amf3: AMF3Decoder(maximumDepth: 32, maximumNodes: 100_000))

    // Whole messages: whatever decodes encodes to bytes that decode and encode to themselves.
    if let values = try? decoder.decodeAll(bytes) {
        let encoded = AMF0Encoder.encode(values)
        guard let again = try? decoder.decodeAll(encoded) else {
            preconditionFailure("encoded values do not decode")
        }
        precondition(AMF0Encoder.encode(again) == encoded, "encoding is not stable")
    }

    // Streaming: a value read from a prefix is the value read from the whole, and a short read
    // leaves the cursor where it was.
    var whole = ByteBuffer(bytes: bytes)
    let full = try? decoder.decode(from: &whole)
    let cut = bytes.count / 2
    var prefix = ByteBuffer(bytes: bytes[..<cut])
    if let partial = try? decoder.decode(from: &prefix) {
        // Compared as bytes: NaN numbers and dates are never equal to themselves.
        if let full { precondition(AMF0Encoder.encode([partial]) == AMF0Encoder.encode([full]), "prefix decodes differently") }
    } else {
        precondition(prefix.readableBytes == cut || (try? decoder.decode(from: &prefix)) == nil)
    }

    // AMF3 on its own, as in AMF3 data messages.
    _ = try? AMF3Decoder(maximumDepth: 32, maximumNodes: 100_000).decodeAll(bytes)
    return 0
}
