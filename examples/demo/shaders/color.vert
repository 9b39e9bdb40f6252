#version 450
layout(location=0) in vec2 pos;
layout(set=0, binding=0) uniform U { vec4 color; vec4 offset; vec4 step; } u;
layout(location=0) out vec4 c;
void main() {
    gl_Position = vec4(pos + u.offset.xy + u.step.xy * float(gl_InstanceIndex), 0.0, 1.0);
    c = u.color;
}
