package engineproc

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// platformProc holds the job object the engine runs in: Windows has no
// process groups, and a job takes the engine's children down with it.
// Without a job (it could not be made) only the engine itself is killed.
type platformProc struct {
	job windows.Handle
}

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// attach puts the started process into a new job that kills every process
// in it when the job's handle is closed. Children the engine starts before
// this runs are not in the job: a small window, and only for engines that
// spawn at once.
func attach(p *os.Process) platformProc {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return platformProc{}
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return platformProc{}
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return platformProc{}
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return platformProc{}
	}
	return platformProc{job: job}
}

func (w platformProc) kill(p *os.Process) {
	if w.job != 0 {
		windows.TerminateJobObject(w.job, 1)
	}
	p.Kill()
}

// release closes the job, which kills whatever is left in it.
func (w platformProc) release() {
	if w.job != 0 {
		windows.CloseHandle(w.job)
	}
}

// quietPipe is os.Pipe: Windows pipes are not in the runtime's poller.
func quietPipe() (r, w *os.File, err error) { return os.Pipe() }

// ownStderrReader: os/exec copies stderr (no runtime poller is involved
// with Windows pipes).
const ownStderrReader = false

func readStderr(*os.File, *tailBuffer) <-chan struct{} { return nil }

// stdinWriter writes with the file's Write: Windows pipes are not in the
// runtime's poller.
type stdinWriter struct{ f *os.File }

func newStdinWriter(f *os.File) stdinWriter { return stdinWriter{f} }

func (w stdinWriter) write(b []byte) error {
	_, err := w.f.Write(b)
	return err
}

var stdoutPipe = os.Pipe

// newSource reads stdout with a goroutine: an anonymous pipe cannot be
// waited on with a deadline. The write end is not needed.
func newSource(stdout, stdoutW *os.File) source {
	stdoutW.Close()
	return newChanSource(stdout)
}
