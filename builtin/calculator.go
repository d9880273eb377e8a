package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

var resultSchema = json.RawMessage(`{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}`)

// maxFactorial is the largest n whose factorial fits in a float64.
const maxFactorial = 170

type param struct {
	name     string
	desc     string
	optional bool    // the parameter may be left out ...
	def      float64 // ... and then takes this value
}

// operation is one calculator tool: eval gets the parameters in the order of params.
type operation struct {
	name   string
	desc   string
	params []param
	eval   func(v []float64) (float64, error)
}

var (
	paramA = []param{{name: "a", desc: "First number."}, {name: "b", desc: "Second number."}}
	paramX = []param{{name: "x", desc: "The number."}}
	angleX = []param{{name: "x", desc: "The angle in radians."}}
)

// operations are the 17 calculator tools, in the order they are listed.
var operations = []operation{
	{"add", "Add two numbers and return the sum a + b.", paramA,
		pure2(func(a, b float64) float64 { return a + b })},
	{"subtract", "Subtract b from a and return the difference a - b.", paramA,
		pure2(func(a, b float64) float64 { return a - b })},
	{"multiply", "Multiply a by b and return the product a × b.", paramA,
		pure2(func(a, b float64) float64 { return a * b })},
	{"divide", "Divide a by b and return the quotient a / b. b must not be zero.", paramA,
		checked2(divide)},
	{"modulo", "Return the remainder of a divided by b (a mod b). The remainder has the sign of b, " +
		"as in Python: -7 mod 3 is 2. b must not be zero.", paramA,
		checked2(modulo)},
	{"power", "Raise base to the power exponent and return base^exponent (e.g. 2^10 = 1024; " +
		"a fractional exponent gives a root).",
		[]param{{name: "base", desc: "The number to raise."}, {name: "exponent", desc: "The power to raise it to."}},
		pure2(math.Pow)},
	{"sqrt", "Return the square root of x. x must not be negative.", paramX,
		checked1(sqrt)},
	{"square", "Square x: return x × x (x to the power 2).", paramX,
		pure1(func(x float64) float64 { return x * x })},
	{"cube", "Cube x: return x × x × x (x to the power 3).", paramX,
		pure1(func(x float64) float64 { return x * x * x })},
	{"sin", "Return the sine of the angle x, given in radians (trigonometry).", angleX,
		pure1(math.Sin)},
	{"cos", "Return the cosine of the angle x, given in radians (trigonometry).", angleX,
		pure1(math.Cos)},
	{"tan", "Return the tangent of the angle x, given in radians (trigonometry).", angleX,
		pure1(math.Tan)},
	{"log", "Return the logarithm of x to the given base (default 10, the common logarithm). " +
		"x must be greater than 0; base must be greater than 0 and not 1.",
		[]param{{name: "x", desc: "The number, greater than 0."},
			{name: "base", desc: "The base of the logarithm (default 10).", optional: true, def: 10}},
		checked2(logarithm)},
	{"ln", "Return the natural logarithm of x (logarithm to base e). x must be greater than 0.", paramX,
		checked1(ln)},
	{"exp", "Return e raised to the power x (the exponential function e^x).", paramX,
		pure1(math.Exp)},
	{"factorial", "Return the factorial of n (n! = 1 × 2 × ... × n) for a whole number n from 0 to 170.",
		[]param{{name: "n", desc: "A whole number from 0 to 170."}},
		checked1(factorial)},
	{"absolute", "Return the absolute value of x: its distance from zero, |x|, always 0 or more.", paramX,
		pure1(math.Abs)},
}

func newCalculator(args []string) (*server.MCPServer, error) {
	if err := parseFlags(flag.NewFlagSet("calculator", flag.ContinueOnError), args); err != nil {
		return nil, err
	}
	srv := newServer("calculator")
	for _, op := range operations {
		srv.AddTool(op.tool(), op.handle)
	}
	return srv, nil
}

func (op operation) tool() mcp.Tool {
	opts := readOnly(false, mcp.WithDescription(op.desc), mcp.WithRawOutputSchema(resultSchema))
	for _, p := range op.params {
		req := mcp.Required()
		if p.optional {
			req = mcp.DefaultNumber(p.def)
		}
		opts = append(opts, mcp.WithNumber(p.name, mcp.Description(p.desc), req))
	}
	return mcp.NewTool(op.name, opts...)
}

func (op operation) handle(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	values := make([]float64, len(op.params))
	for i, p := range op.params {
		v, err := numberArg(args, p.name, !p.optional, p.def)
		if err != nil {
			return toolError(op.name, err), nil
		}
		values[i] = v
	}
	r, err := op.eval(values)
	if err == nil {
		err = checkFinite(r)
	}
	if err != nil {
		return toolError(op.name, err), nil
	}
	r = tidy(r)
	return mcp.NewToolResultStructured(map[string]any{"result": r}, strconv.FormatFloat(r, 'g', -1, 64)), nil
}

// checkFinite rejects results that JSON cannot carry.
func checkFinite(r float64) error {
	switch {
	case math.IsNaN(r):
		return errors.New("the result is not a real number")
	case math.IsInf(r, 0):
		return errors.New("the result is infinite or too large for a 64-bit float")
	}
	return nil
}

// tidy rounds away binary floating-point noise: a fraction whose shortest decimal form needs more
// than 15 significant digits, like 0.1 + 0.2 = 0.30000000000000004, is rounded to 15 (0.3). Whole
// numbers are kept exact, and -0 becomes 0.
func tidy(r float64) float64 {
	if r == math.Trunc(r) {
		return r + 0 // -0 + 0 is +0
	}
	t, err := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 15, 64), 64)
	if err != nil {
		return r
	}
	return t
}

func pure1(f func(x float64) float64) func([]float64) (float64, error) {
	return func(v []float64) (float64, error) { return f(v[0]), nil }
}

func pure2(f func(a, b float64) float64) func([]float64) (float64, error) {
	return func(v []float64) (float64, error) { return f(v[0], v[1]), nil }
}

func checked1(f func(x float64) (float64, error)) func([]float64) (float64, error) {
	return func(v []float64) (float64, error) { return f(v[0]) }
}

func checked2(f func(a, b float64) (float64, error)) func([]float64) (float64, error) {
	return func(v []float64) (float64, error) { return f(v[0], v[1]) }
}

func divide(a, b float64) (float64, error) {
	if b == 0 {
		return 0, errors.New("cannot divide by zero")
	}
	return a / b, nil
}

func modulo(a, b float64) (float64, error) {
	if b == 0 {
		return 0, errors.New("cannot take a remainder modulo zero")
	}
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r, nil
}

func sqrt(x float64) (float64, error) {
	if x < 0 {
		return 0, fmt.Errorf("cannot take the square root of a negative number (%v)", x)
	}
	return math.Sqrt(x), nil
}

func ln(x float64) (float64, error) {
	if x <= 0 {
		return 0, fmt.Errorf("x must be greater than 0, got %v", x)
	}
	return math.Log(x), nil
}

// logarithm uses the exact library functions for bases 10 and 2, so that log(1000) is 3, and
// returns a whole number when one is exact for other bases.
func logarithm(x, base float64) (float64, error) {
	switch {
	case x <= 0:
		return 0, fmt.Errorf("x must be greater than 0, got %v", x)
	case base <= 0 || base == 1:
		return 0, fmt.Errorf("base must be greater than 0 and not 1, got %v", base)
	case base == 10:
		return math.Log10(x), nil
	case base == 2:
		return math.Log2(x), nil
	}
	r := math.Log(x) / math.Log(base)
	if whole := math.Round(r); math.Pow(base, whole) == x {
		return whole, nil // log(27, 3) is 3, not 3.0000000000000004
	}
	return r, nil
}

func factorial(n float64) (float64, error) {
	switch {
	case n != math.Trunc(n):
		return 0, fmt.Errorf("n must be a whole number, got %v", n)
	case n < 0:
		return 0, fmt.Errorf("n must not be negative, got %v", n)
	case n > maxFactorial:
		return 0, fmt.Errorf("n must be at most %d (larger factorials overflow a 64-bit float), got %v", maxFactorial, n)
	}
	r := 1.0
	for i := 2.0; i <= n; i++ {
		r *= i
	}
	return r, nil
}
