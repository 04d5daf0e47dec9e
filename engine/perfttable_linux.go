package engine

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks Linux to back the table with 2 MB pages when
// transparent huge pages are in "madvise" mode (the common default): a
// probe is a random access into hundreds of megabytes, and with 4 KB pages
// nearly every one also misses the TLB and walks the page tables. The
// advice is only advice; an error changes nothing but speed.
func adviseHugePages(buckets []perftBucket) {
	if len(buckets) == 0 {
		return
	}
	adviseHugePagesOf(unsafe.Pointer(&buckets[0]), uintptr(len(buckets))*unsafe.Sizeof(buckets[0]))
}

// adviseHugePagesOf is adviseHugePages for size bytes at p.
func adviseHugePagesOf(p unsafe.Pointer, size uintptr) {
	const page = 4096
	skip := -uintptr(p) & (page - 1) // to the first page boundary
	if size <= skip+page {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, skip)), (size-skip)&^(page-1)), syscall.MADV_HUGEPAGE)
}
