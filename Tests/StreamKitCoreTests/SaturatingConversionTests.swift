import StreamKitCore
import Testing

@Suite struct SaturatingConversionTests {
    @Test func valuesInRangeRoundTowardZero() {
        #expect(Int(saturating: 2.9) == 2)
        #expect(Int(saturating: -2.9) == -2)
        #expect(Int64(saturating: 9_007_199_254_740_992) == 9_007_199_254_740_992)
        #expect(Int32(saturating: 2_147_483_646.5) == 2_147_483_646)
    }

    @Test func valuesOutOfRangeAndNaNAreClamped() {
        #expect(Int(saturating: 1e30) == .max)
        #expect(Int(saturating: -1e30) == .min)
        #expect(Int64(saturating: 9_223_372_036_854_775_808) == .max)  // 2^63, one past Int64.max
        #expect(Int(saturating: .infinity) == .max)
        #expect(Int(saturating: -.infinity) == .min)
        #expect(Int(saturating: .nan) == 0)
        #expect(UInt8(saturating: -1) == 0)
        #expect(UInt8(saturating: 300) == 255)
    }
}
