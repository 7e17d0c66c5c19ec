// When does a graph start its second branch? A two-branch step shaped like a BatchNorm chain
// beside GEMMs, captured by the CUDA runtime alone (docs/validation-h200.md, "A profiled
// graph's late second branch ..." and "Paced reads per block ..."): branch A = U x (one-block T,
// one-block T, BIG: 8192 blocks of 2 us), then T; branch B = NW x W (128 blocks of 384
// threads, 213 KB dynamic shared memory: a whole SM each, as cuBLAS's GEMMs); a join kernel.
// The host issues A first ("ab") or B first ("ba"); launched as a graph (instantiated with
// node priority where the fifth argument is 1) or eagerly. With the sixth argument 1 the fork's
// origin stream holds no kernel before the fork, so both branches are the graph's roots (as in
// a graph PyTorch captures from a fork at the start of its step). Prints medians over 30 runs,
// us from A's first kernel: BIG#1's and W#1's first block, and the join's end. No profiler.
//   nvcc -O2 -arch=sm_90 -o branch_start_probe scripts/branch_start_probe.cu
//   ./branch_start_probe U NW ab|ba graph(0|1) [node-priority 0|1] [roots 0|1]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
__device__ __forceinline__ unsigned long long gt(){unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t)); return t;}
__global__ void k(unsigned long long ns, unsigned long long* rec){
  extern __shared__ char sm[];
  unsigned long long t0=gt(), now;
  do { now=gt(); } while(now-t0<ns);
  __syncthreads();
  if(threadIdx.x==0){ atomicMin(&rec[0],t0); atomicMax(&rec[1],gt()); }
}
#define CK(x) do{cudaError_t e=(x); if(e){fprintf(stderr,"%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
int main(int argc,char**argv){
  if(argc<5){fprintf(stderr,"usage: U NW ab|ba graph(0|1) [node-priority 0|1] [roots 0|1]\n");return 2;}
  int U=atoi(argv[1]), NW=atoi(argv[2]); bool ab=argv[3][0]=='a'; int graph=atoi(argv[4]); int prio=argc>5?atoi(argv[5]):0; int roots=argc>6?atoi(argv[6]):0;
  const int reps=30, S=64;
  CK(cudaFuncSetAttribute(k,cudaFuncAttributeMaxDynamicSharedMemorySize,232448));
  unsigned long long* rec; CK(cudaMalloc(&rec,S*2*8));
  cudaStream_t s0,sa,sb; cudaStreamCreateWithFlags(&s0,cudaStreamNonBlocking); cudaStreamCreateWithFlags(&sa,cudaStreamNonBlocking); cudaStreamCreateWithFlags(&sb,cudaStreamNonBlocking);
  cudaEvent_t f,ja,jb; cudaEventCreateWithFlags(&f,cudaEventDisableTiming); cudaEventCreateWithFlags(&ja,cudaEventDisableTiming); cudaEventCreateWithFlags(&jb,cudaEventDisableTiming);
  std::vector<unsigned long long> init(2*S); for(int i=0;i<S;i++){init[2*i]=~0ull; init[2*i+1]=0;}
  // slots: 0 first T; 1..U BIG#i ; 20.. W#i ; 40 join
  auto issue=[&](){
    if(!roots) k<<<1,32,0,s0>>>(500,rec+2*63);
    cudaEventRecord(f,s0); cudaStreamWaitEvent(sa,f,0); cudaStreamWaitEvent(sb,f,0);
    auto A=[&](){ for(int u=0;u<U;u++){ k<<<1,128,0,sa>>>(1000,rec+2*(u==0?0:50)); k<<<1,128,0,sa>>>(1000,rec+2*51); k<<<8192,256,0,sa>>>(2000,rec+2*(1+u)); } k<<<1,128,0,sa>>>(1000,rec+2*52); };
    auto B=[&](){ for(int i=0;i<NW;i++) k<<<128,384,213268,sb>>>(15000,rec+2*(20+i)); };
    if(ab){A();B();}else{B();A();}
    cudaEventRecord(ja,sa); cudaEventRecord(jb,sb); cudaStreamWaitEvent(s0,ja,0); cudaStreamWaitEvent(s0,jb,0);
    k<<<1,32,0,s0>>>(500,rec+2*40);
  };
  cudaGraphExec_t ex=nullptr;
  if(graph){ cudaGraph_t g; CK(cudaStreamBeginCapture(s0,cudaStreamCaptureModeGlobal)); issue(); CK(cudaStreamEndCapture(s0,&g));
    CK(cudaGraphInstantiateWithFlags(&ex,g,prio?cudaGraphInstantiateFlagUseNodePriority:0)); }
  std::vector<double> b1,w1,mk;
  for(int r=0;r<reps+3;r++){
    CK(cudaMemcpy(rec,init.data(),S*16,cudaMemcpyHostToDevice));
    if(graph) CK(cudaGraphLaunch(ex,s0)); else issue();
    CK(cudaStreamSynchronize(s0));
    std::vector<unsigned long long> h(2*S); CK(cudaMemcpy(h.data(),rec,S*16,cudaMemcpyDeviceToHost));
    if(r<3) continue;
    double t=h[0]; b1.push_back((h[2]-t)/1e3); w1.push_back(((double)h[40]-t)/1e3); mk.push_back((h[81]-t)/1e3);
  }
  auto med=[](std::vector<double> v){std::sort(v.begin(),v.end());return v[v.size()/2];};
  printf("U %d NW %d %s %s prio %d roots %d : BIG#1 %.1f  W#1 %.1f  join end %.1f us\n",U,NW,ab?"ab":"ba",graph?"graph":"eager",prio,roots,med(b1),med(w1),med(mk));
  return 0;
}
