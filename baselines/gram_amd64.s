//go:build amd64 && !purego

#include "textflag.h"

// func gramTileAVX(acc *[32]float64, a, b *float64, ld, kb int)
//
// For l in 0 … kb−1, in order: acc[8r+q] += a[l·ld+r]·b[l·ld+q] for
// r < 4, q < 8, each product rounded before the sum (VMULPD then VADDPD,
// never a fused multiply-add). Y0…Y7 hold the 4 × 8 tile, row r in
// Y(2r) (columns 0–3) and Y(2r+1) (columns 4–7).
TEXT ·gramTileAVX(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ ld+24(FP), BX
	SHLQ $3, BX
	MOVQ kb+32(FP), CX
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VMOVUPD 128(DI), Y4
	VMOVUPD 160(DI), Y5
	VMOVUPD 192(DI), Y6
	VMOVUPD 224(DI), Y7
	TESTQ CX, CX
	JLE done

loop:
	VMOVUPD 0(DX), Y8
	VMOVUPD 32(DX), Y9

	VBROADCASTSD 0(SI), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y0, Y0
	VMULPD Y9, Y10, Y12
	VADDPD Y12, Y1, Y1

	VBROADCASTSD 8(SI), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y2, Y2
	VMULPD Y9, Y10, Y12
	VADDPD Y12, Y3, Y3

	VBROADCASTSD 16(SI), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y4, Y4
	VMULPD Y9, Y10, Y12
	VADDPD Y12, Y5, Y5

	VBROADCASTSD 24(SI), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y6, Y6
	VMULPD Y9, Y10, Y12
	VADDPD Y12, Y7, Y7

	ADDQ BX, SI
	ADDQ BX, DX
	DECQ CX
	JNZ loop

done:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	VZEROUPPER
	RET

// func hasAVX() bool: the processor has AVX and the operating system saves
// the YMM registers (CPUID.1:ECX bits 27 and 28, XCR0 bits 1 and 2).
TEXT ·hasAVX(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, DX
	ANDL $0x18000000, DX
	CMPL DX, $0x18000000
	JNE no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE no
	MOVB $1, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET
