package engine
import "testing"
func TestZZProf(t *testing.T){
	for i:=0;i<3;i++{
	p := StartPosition()
	PerftWithTable(&p, 6, nil)
	}
}
