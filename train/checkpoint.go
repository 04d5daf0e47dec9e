package train

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// checkpointMagic opens a checkpoint file; the hidden size follows, so a
// checkpoint of another architecture is refused by name.
const checkpointMagic = "ARBITER-NNUE-CKPT-1\n"

type checkpointHeader struct {
	Hidden, Epoch      uint32
	Step, Seed, Digest uint64
	Count              uint64
}

// SaveCheckpoint writes s to path atomically (a temporary file renamed over
// it), so a run killed while saving keeps its previous checkpoint.
func SaveCheckpoint(path string, s *State) error {
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	h := checkpointHeader{Hidden: hidden, Epoch: uint32(s.Epoch), Step: s.Step, Seed: s.Seed, Digest: s.Digest, Count: s.Count}
	binary.Write(&buf, binary.LittleEndian, &h)
	for _, p := range []*params{&s.Params, &s.M, &s.V} {
		binary.Write(&buf, binary.LittleEndian, flat(p))
	}
	return writeAtomic(path, buf.Bytes())
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint.
func LoadCheckpoint(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte(checkpointMagic)) {
		return nil, fmt.Errorf("checkpoint %s: not an arbiter train checkpoint (no %q header)", path, checkpointMagic[:len(checkpointMagic)-1])
	}
	r := bytes.NewReader(data[len(checkpointMagic):])
	var h checkpointHeader
	if err := binary.Read(r, binary.LittleEndian, &h); err != nil {
		return nil, fmt.Errorf("checkpoint %s: truncated header", path)
	}
	if h.Hidden != hidden {
		return nil, fmt.Errorf("checkpoint %s: a (768→%d)×2→1 net, this build trains (768→%d)×2→1", path, h.Hidden, hidden)
	}
	s := &State{Epoch: int(h.Epoch), Step: h.Step, Seed: h.Seed, Digest: h.Digest, Count: h.Count}
	want := int(3*len(flat(&s.Params))*4) + len(checkpointMagic) + binary.Size(h)
	if len(data) != want {
		return nil, fmt.Errorf("checkpoint %s: %d bytes, want %d (truncated?)", path, len(data), want)
	}
	for _, p := range []*params{&s.Params, &s.M, &s.V} {
		if err := binary.Read(r, binary.LittleEndian, flat(p)); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
	}
	return s, nil
}

// SaveNet quantises p and writes it as the engine loads it.
func SaveNet(path string, p *params) error {
	n, err := p.Quantise()
	if err != nil {
		return err
	}
	data, err := n.MarshalBinary()
	if err != nil {
		return err
	}
	return writeAtomic(path, data)
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil { // CreateTemp makes it 0600
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// Run trains from s (a new state, or a checkpoint's) until cfg.Epochs,
// printing one line per epoch to out, saving a checkpoint and its net in
// dir after every epoch (if dir is set), and the final net to netPath.
func Run(cfg Config, data *Dataset, s *State, dir, netPath string, out io.Writer) error {
	if s.Seed != cfg.Seed {
		return fmt.Errorf("the checkpoint's seed is %d, not %d: a resumed run keeps its seed", s.Seed, cfg.Seed)
	}
	if s.Digest != data.Digest || s.Count != uint64(len(data.Samples)) {
		return fmt.Errorf("the checkpoint was trained on %d positions (digest %016x), the data given has %d (digest %016x): resume with the same files",
			s.Count, s.Digest, len(data.Samples), data.Digest)
	}
	t, err := NewTrainer(cfg, data, out)
	if err != nil {
		return err
	}
	if s.Epoch >= cfg.Epochs {
		return fmt.Errorf("the checkpoint has completed %d epochs already; ask for more with --epochs", s.Epoch)
	}
	nTrain, nVal := t.Sizes()
	fmt.Fprintf(out, "training %s on %d positions (%d held out for validation), %d threads, seed %d, from epoch %d\n",
		nnue.Architecture(), nTrain, nVal, cfg.Threads, cfg.Seed, s.Epoch+1)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	for s.Epoch < cfg.Epochs {
		r := t.Epoch(s)
		fmt.Fprintf(out, "epoch %d/%d  train loss %.6f  val loss %.6f  lr %.2e  %.1fs  %.0f pos/s\n",
			r.Epoch, cfg.Epochs, r.TrainLoss, r.ValLoss, r.LR, r.Elapsed.Seconds(), float64(nTrain)/r.Elapsed.Seconds())
		if dir != "" {
			ck := filepath.Join(dir, fmt.Sprintf("epoch-%d.ckpt", r.Epoch))
			if err := SaveCheckpoint(ck, s); err != nil {
				return err
			}
			if err := SaveNet(filepath.Join(dir, fmt.Sprintf("epoch-%d.nnue", r.Epoch)), &s.Params); err != nil {
				return err
			}
		}
	}
	if err := SaveNet(netPath, &s.Params); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", netPath)
	return nil
}
